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
  -- NOT VALID: enforced for every row written from now on, without scanning the table under
  -- lock (every existing row has its plain secret).
  ADD CONSTRAINT webhook_endpoints_secret_present
    CHECK ((secret_sealed IS NOT NULL AND secret_key_id IS NOT NULL) OR secret IS NOT NULL) NOT VALID;
-- Retention finds expired previous secrets through an index: 006_sealed_secrets_expiry.sql.

-- Down Migration
-- Only while every row still has its plain secret (before the webhooks process sealed them).
ALTER TABLE webhook_endpoints
  DROP CONSTRAINT webhook_endpoints_secret_present,
  ALTER COLUMN secret SET NOT NULL,
  DROP COLUMN previous_secret_key_id,
  DROP COLUMN previous_secret_sealed,
  DROP COLUMN secret_key_id,
  DROP COLUMN secret_sealed;
