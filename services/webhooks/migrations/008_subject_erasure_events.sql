-- migrate: no-transaction
-- A subject's events, for its erasure and export, built without blocking the events' writes.
DROP INDEX CONCURRENTLY IF EXISTS webhook_events_subject;
CREATE INDEX CONCURRENTLY webhook_events_subject ON webhook_events (environment_id, subject_id) WHERE subject_id IS NOT NULL;
