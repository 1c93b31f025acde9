-- migrate: no-transaction
-- Retention erases a rotation's previous secret once it expired, found through this index; built
-- without blocking the endpoints' writes. Dropped first, as an interrupted build leaves an
-- invalid index behind.
DROP INDEX CONCURRENTLY IF EXISTS webhook_endpoints_previous_secret_expiry;
CREATE INDEX CONCURRENTLY webhook_endpoints_previous_secret_expiry ON webhook_endpoints (previous_secret_expires_at) WHERE previous_secret_expires_at IS NOT NULL;
