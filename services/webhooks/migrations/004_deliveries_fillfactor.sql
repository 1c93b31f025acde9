-- Up Migration
-- Room on each page for a delivery's lease (`leased_until`, `claim_token`, no indexed column) to
-- be written beside it as a HOT update, rather than as a new row version in every index.
ALTER TABLE webhook_deliveries SET (fillfactor = 70);

-- Down Migration
ALTER TABLE webhook_deliveries RESET (fillfactor);
