-- Up Migration
-- Webhook endpoints of an environment (docs/webhooks.md). `secret` signs every attempt; after a
-- rotation `previous_secret` signs beside it until `previous_secret_expires_at` (24 h).
-- An endpoint is enabled while `disabled_at` is null. `failing_since` is the first failed attempt
-- after the last success, for the automatic disabling of docs/webhooks.md. Deleted endpoints are kept
-- (their deliveries remain readable) but no longer count or receive anything.
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL,
  url text NOT NULL,
  event_types text[] NOT NULL,
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  disabled_at timestamptz,
  disabled_reason text,
  failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_page ON webhook_endpoints (environment_id, created_at DESC, id DESC)
  WHERE deleted_at IS NULL;

-- Each event once, with the exact body every attempt sends (and signs).
CREATE TABLE webhook_events (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL,
  event_type text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);

-- One delivery per (endpoint, event): a repeated event (a redelivered message, a relay that
-- published twice) finds it already there. `status` is pending (waiting for its first attempt
-- or a replay), failed (waiting for a retry at next_attempt_at), succeeded or dead_letter.
-- A worker that takes a delivery leases it (`leased_until`, `claim_token`); only the holder of
-- the token may set the outcome. `series_start` is attempt_count when the current series of
-- attempts began (creation, replay, recover), so the retry schedule restarts while the count
-- keeps counting.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
  event_id uuid NOT NULL REFERENCES webhook_events (id),
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'failed', 'succeeded', 'dead_letter')),
  attempt_count integer NOT NULL DEFAULT 0,
  series_start integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  leased_until timestamptz,
  claim_token uuid,
  last_error text,
  response_status integer,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  CONSTRAINT webhook_deliveries_once UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id)
  WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_deliveries_page ON webhook_deliveries (environment_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);

CREATE TABLE webhook_delivery_attempts (
  id uuid PRIMARY KEY,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id),
  attempted_at timestamptz NOT NULL,
  response_status integer,
  error text,
  duration_ms integer NOT NULL
);
CREATE INDEX webhook_delivery_attempts_of ON webhook_delivery_attempts (delivery_id, attempted_at);

-- Down Migration
DROP TABLE webhook_delivery_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
