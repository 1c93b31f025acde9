-- Up Migration
-- Events written in the same transaction as the change that emits them (docs/webhooks.md).
-- The relay publishes unpublished rows to JetStream and stamps published_at after the ack.
CREATE TABLE outbox (
  id uuid PRIMARY KEY,
  event_type text NOT NULL,
  environment_id uuid NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  published_at timestamptz
);
CREATE INDEX outbox_unpublished ON outbox (created_at, id) WHERE published_at IS NULL;

-- Down Migration
DROP TABLE outbox;
