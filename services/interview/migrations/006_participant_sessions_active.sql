-- migrate: no-transaction
-- The active sessions the quota counts: a revoked one no longer is. Rebuilt without blocking the
-- sessions' writes (the quota's count reads the table meanwhile).
DROP INDEX CONCURRENTLY IF EXISTS participant_sessions_active;
CREATE INDEX CONCURRENTLY participant_sessions_active ON participant_sessions (environment_id, expires_at) WHERE completed_at IS NULL AND revoked_at IS NULL;
