-- Up Migration
-- Retention deletes published rows oldest first (docs/configuration.md#retention); unpublished
-- rows have their own index and are never deleted.
CREATE INDEX outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL;

-- Down Migration
DROP INDEX outbox_published;
