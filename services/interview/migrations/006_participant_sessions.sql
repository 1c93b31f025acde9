-- Up Migration
-- A participant session can be revoked (docs/interview.md#participant-sessions): by
-- `DELETE ENV/evaluations/{evaluation_id}/participant-sessions/{session_id}`, or by a newer
-- session of the same evaluation, which supersedes the older ones. A revoked session's tokens
-- open nothing more and it stops counting against `active_participant_sessions`.
ALTER TABLE participant_sessions
  ADD COLUMN revoked_at timestamptz,
  ADD COLUMN revoked_reason text CHECK (revoked_reason IN ('revoked', 'superseded')),
  ADD CONSTRAINT participant_sessions_revoked_reason CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL));

-- The active sessions counted by the quota: a revoked one no longer is.
DROP INDEX participant_sessions_active;
CREATE INDEX participant_sessions_active ON participant_sessions (environment_id, expires_at)
  WHERE completed_at IS NULL AND revoked_at IS NULL;

-- Down Migration
DROP INDEX participant_sessions_active;
CREATE INDEX participant_sessions_active ON participant_sessions (environment_id, expires_at)
  WHERE completed_at IS NULL;
ALTER TABLE participant_sessions
  DROP CONSTRAINT participant_sessions_revoked_reason,
  DROP COLUMN revoked_reason,
  DROP COLUMN revoked_at;
