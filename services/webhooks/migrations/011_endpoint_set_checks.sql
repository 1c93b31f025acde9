-- Up Migration
-- The events consumer stores each batch in one prepared statement (src/db/deliveries.ts), planned
-- once per connection rather than at every batch. What that statement reads of the endpoints
-- table, whose size a plan made once cannot follow (a few rows when the plan was made may be
-- thousands later, before the server's statistics are updated), it reads through these
-- functions: each one that reads the table plans its query at every call (plan_cache_mode, set
-- for the call only) from the table's size at that moment, so it goes by index once the table is
-- large. They are STABLE: they read in the snapshot of the statement that calls them.

-- An environment's endpoint fingerprint (src/db/endpoint-sets.ts): the md5 of its endpoints not
-- deleted, each as its id and migration 010's version, in id order; null when it has none.
CREATE FUNCTION webhook_endpoint_set_fingerprint(environment uuid) RETURNS text
LANGUAGE sql STABLE
SET plan_cache_mode = force_custom_plan
AS $$
  SELECT md5(string_agg(e.id::text || ':' || COALESCE(e.version, 0), ',' ORDER BY e.id))
  FROM webhook_endpoints e
  WHERE e.environment_id = environment AND e.deleted_at IS NULL
$$;

-- Whether every environment's fingerprint is still the one a batch was planned with.
CREATE FUNCTION webhook_endpoint_sets_hold(environments uuid[], fingerprints text[]) RETURNS boolean
LANGUAGE sql STABLE
AS $$
  SELECT COALESCE(bool_and(
    webhook_endpoint_set_fingerprint(planned.environment_id) IS NOT DISTINCT FROM planned.fingerprint), true)
  FROM unnest(environments, fingerprints) AS planned (environment_id, fingerprint)
$$;

-- Of the endpoints given, those whose failure streak is open.
CREATE FUNCTION webhook_failing_endpoints(ids uuid[]) RETURNS uuid[]
LANGUAGE sql STABLE
SET plan_cache_mode = force_custom_plan
AS $$
  SELECT COALESCE(array_agg(e.id), '{}') FROM webhook_endpoints e
  WHERE e.id = ANY (ids) AND e.failing_since IS NOT NULL
$$;

-- Down Migration
DROP FUNCTION webhook_failing_endpoints(uuid[]);
DROP FUNCTION webhook_endpoint_sets_hold(uuid[], text[]);
DROP FUNCTION webhook_endpoint_set_fingerprint(uuid);
