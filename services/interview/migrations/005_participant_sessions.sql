-- Up Migration
-- A participant session can be revoked (docs/interview.md#participant-sessions): by
-- `DELETE ENV/evaluations/{evaluation_id}/participant-sessions/{session_id}`, or by a newer
-- session of the same evaluation, which supersedes the older ones. A revoked session's tokens
-- open nothing more and it stops counting against `active_participant_sessions` (its index:
-- 006_participant_sessions_active.sql). The checks are NOT VALID: enforced for every row written
-- from now on, without scanning the table under lock (no existing row is revoked).
ALTER TABLE participant_sessions
  ADD COLUMN revoked_at timestamptz,
  ADD COLUMN revoked_reason text,
  ADD CONSTRAINT participant_sessions_revoked_reason_known
    CHECK (revoked_reason IN ('revoked', 'superseded')) NOT VALID,
  ADD CONSTRAINT participant_sessions_revoked_reason
    CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL)) NOT VALID;

-- Down Migration
ALTER TABLE participant_sessions
  DROP CONSTRAINT participant_sessions_revoked_reason,
  DROP CONSTRAINT participant_sessions_revoked_reason_known,
  DROP COLUMN revoked_reason,
  DROP COLUMN revoked_at;
