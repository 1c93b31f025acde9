-- Up Migration
-- The trace of the event a delivery was made for (W3C `traceparent`/`tracestate`,
-- docs/operations.md#tracing): each attempt is a span under it. NULL when the event was not traced.
ALTER TABLE webhook_deliveries ADD COLUMN trace_context jsonb;

-- Down Migration
ALTER TABLE webhook_deliveries DROP COLUMN trace_context;
