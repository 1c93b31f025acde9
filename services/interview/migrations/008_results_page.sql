-- migrate: no-transaction
-- The list of an environment's evaluations, newest first (GET ENV/evaluations): built without
-- blocking the writes of a table in use. Dropped first, as an interrupted build leaves an
-- invalid index behind.
DROP INDEX CONCURRENTLY IF EXISTS evaluations_page;
CREATE INDEX CONCURRENTLY evaluations_page ON evaluations (environment_id, created_at DESC, id DESC);
