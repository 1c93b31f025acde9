-- Up Migration
-- No foreign keys on the delivery path: each one's check locked the row it points at (FOR KEY
-- SHARE) for every delivery and attempt written, so every batch the consumer stored locked its
-- endpoints' rows (which a failing attempt's streak holds FOR UPDATE, so they waited on each
-- other) and every attempt locked its delivery. What they guaranteed is kept by the writers
-- (docs/webhooks.md#what-keeps-references-whole): endpoints are never deleted (a deletion sets
-- `deleted_at`); an event is stored in the statement or transaction that stores its deliveries,
-- a stored one is locked by the consumer that refers to it again, and retention deletes an event
-- only after locking it and seeing, in a later statement, that no delivery refers to it; an
-- attempt is written only with the update of its delivery's row, which locks that row against
-- retention. Dropping a constraint needs no scan; the previous release's code never relied on one.
ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_delivery_id_fkey;
ALTER TABLE webhook_deliveries
  DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey,
  DROP CONSTRAINT webhook_deliveries_event_id_fkey;

-- Down Migration
-- NOT VALID: enforced for rows written from now on, without scanning the tables under lock.
ALTER TABLE webhook_deliveries
  ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) NOT VALID,
  ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES webhook_events (id) NOT VALID;
ALTER TABLE webhook_delivery_attempts
  ADD CONSTRAINT webhook_delivery_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) NOT VALID;
