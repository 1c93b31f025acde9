-- Up Migration
-- Retention (docs/configuration.md#retention) deletes sessions, invitations and password resets
-- some days past their expiry, and audit events past an age when that is configured, oldest first.
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX invitations_expires ON invitations (expires_at);
CREATE INDEX password_resets_expires ON password_resets (expires_at);
CREATE INDEX audit_events_created ON audit_events (created_at);

-- Down Migration
DROP INDEX audit_events_created;
DROP INDEX password_resets_expires;
DROP INDEX invitations_expires;
DROP INDEX sessions_expires;
