-- migrate: no-transaction
-- The list of an environment's subjects, newest first, erased ones left out (GET ENV/subjects),
-- built without blocking the subjects' writes.
DROP INDEX CONCURRENTLY IF EXISTS subjects_page;
CREATE INDEX CONCURRENTLY subjects_page ON subjects (environment_id, created_at DESC, id DESC) WHERE erased_at IS NULL;
