-- Up Migration
-- The trace the row was written in (W3C `traceparent`/`tracestate`, docs/operations.md#tracing):
-- the relay publishes the row in a span under it, so one trace runs from the API call to the
-- consumers of the event. NULL when the writer was not traced.
ALTER TABLE outbox ADD COLUMN trace_context jsonb;

-- Down Migration
ALTER TABLE outbox DROP COLUMN trace_context;
