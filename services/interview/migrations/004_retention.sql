-- Up Migration
-- Retention (docs/configuration.md#retention) deletes behavioral events past an age, oldest
-- first, and, when that is configured, the entries of interviews that ended long enough ago.
CREATE INDEX behavioral_events_created ON behavioral_events (created_at);
CREATE INDEX interviews_finished ON interviews (completed_at) WHERE completed_at IS NOT NULL;

-- Down Migration
DROP INDEX interviews_finished;
DROP INDEX behavioral_events_created;
