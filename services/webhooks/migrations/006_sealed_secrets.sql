-- Up Migration
-- Endpoint secrets sealed at rest (docs/webhooks.md#secrets-at-rest): AES-256-GCM under a key of
-- WEBHOOK_SECRETS_KEYS, whose id is kept beside each sealed value so that the key can be rotated
-- (docs/operations.md#webhook-secrets-key). The plain columns stay for this release only (expand):
-- the webhooks process seals the rows that still have them at start (and at each retention round)
-- and clears them, and a later release drops them (contract). A row has its secret in one form
-- or the other.
ALTER TABLE webhook_endpoints
  ADD COLUMN secret_sealed text,
  ADD COLUMN secret_key_id text,
  ADD COLUMN previous_secret_sealed text,
  ADD COLUMN previous_secret_key_id text,
  ALTER COLUMN secret DROP NOT NULL,
  ADD CONSTRAINT webhook_endpoints_secret_present
    CHECK ((secret_sealed IS NOT NULL AND secret_key_id IS NOT NULL) OR secret IS NOT NULL);
-- Retention erases a rotation's previous secret once it expired, found through this index.
CREATE INDEX webhook_endpoints_previous_secret_expiry ON webhook_endpoints (previous_secret_expires_at)
  WHERE previous_secret_expires_at IS NOT NULL;

-- Down Migration
-- Only while every row still has its plain secret (before the webhooks process sealed them).
DROP INDEX webhook_endpoints_previous_secret_expiry;
ALTER TABLE webhook_endpoints
  DROP CONSTRAINT webhook_endpoints_secret_present,
  ALTER COLUMN secret SET NOT NULL,
  DROP COLUMN previous_secret_key_id,
  DROP COLUMN previous_secret_sealed,
  DROP COLUMN secret_key_id,
  DROP COLUMN secret_sealed;
