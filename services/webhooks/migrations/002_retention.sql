-- Up Migration
-- Retention (docs/configuration.md#retention) deletes deliveries in a final state (succeeded,
-- dead_letter) by the time of their last change, oldest first, with their attempts, and then the
-- events no delivery refers to any more (found through `webhook_deliveries_event`).
CREATE INDEX webhook_deliveries_final ON webhook_deliveries (updated_at)
  WHERE status IN ('succeeded', 'dead_letter');
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_events_created ON webhook_events (created_at);

-- Down Migration
DROP INDEX webhook_events_created;
DROP INDEX webhook_deliveries_event;
DROP INDEX webhook_deliveries_final;
