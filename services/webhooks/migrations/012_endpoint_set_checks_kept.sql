-- Up Migration
-- Migration 011's reads of the endpoints table, with their plans kept. As SQL functions they were
-- parsed and planned at every call (Postgres keeps no plan of a SQL function from one statement
-- to the next), several times per batch the events consumer stores or confirms: about 0.2 ms
-- each. As PL/pgSQL functions each query is parsed once per connection and keeps one generic
-- plan. What made 011 plan them per call still holds: a plan kept from when the table was small
-- would read it whole by sequential scan once it is large (the statistics it was made from do
-- not change until the next ANALYZE). So the two that read the table are planned with
-- `enable_seqscan` off: the planner takes the index (environment first, or the primary key)
-- whatever size it believes the table is, and a plan made on an empty table still reads only the
-- rows asked for when it holds thousands (src/db/endpoint-sets.test.ts). Both settings hold for
-- the call only. Names, arguments and results are 011's: the previous release calls them as is.
-- STABLE: they read in the snapshot of the statement that calls them.
CREATE OR REPLACE FUNCTION webhook_endpoint_set_fingerprint(environment uuid) RETURNS text
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
  RETURN (SELECT md5(string_agg(e.id::text || ':' || COALESCE(e.version, 0), ',' ORDER BY e.id))
          FROM webhook_endpoints e
          WHERE e.environment_id = environment AND e.deleted_at IS NULL);
END;
$$;

CREATE OR REPLACE FUNCTION webhook_endpoint_sets_hold(environments uuid[], fingerprints text[]) RETURNS boolean
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN (SELECT COALESCE(bool_and(
            webhook_endpoint_set_fingerprint(planned.environment_id) IS NOT DISTINCT FROM planned.fingerprint), true)
          FROM unnest(environments, fingerprints) AS planned (environment_id, fingerprint));
END;
$$;

CREATE OR REPLACE FUNCTION webhook_failing_endpoints(ids uuid[]) RETURNS uuid[]
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
  RETURN (SELECT COALESCE(array_agg(e.id), '{}') FROM webhook_endpoints e
          WHERE e.id = ANY (ids) AND e.failing_since IS NOT NULL);
END;
$$;

-- Down Migration
-- 011's definitions again.
CREATE OR REPLACE FUNCTION webhook_endpoint_set_fingerprint(environment uuid) RETURNS text
LANGUAGE sql STABLE
SET plan_cache_mode = force_custom_plan
AS $$
  SELECT md5(string_agg(e.id::text || ':' || COALESCE(e.version, 0), ',' ORDER BY e.id))
  FROM webhook_endpoints e
  WHERE e.environment_id = environment AND e.deleted_at IS NULL
$$;
CREATE OR REPLACE FUNCTION webhook_endpoint_sets_hold(environments uuid[], fingerprints text[]) RETURNS boolean
LANGUAGE sql STABLE
AS $$
  SELECT COALESCE(bool_and(
    webhook_endpoint_set_fingerprint(planned.environment_id) IS NOT DISTINCT FROM planned.fingerprint), true)
  FROM unnest(environments, fingerprints) AS planned (environment_id, fingerprint)
$$;
CREATE OR REPLACE FUNCTION webhook_failing_endpoints(ids uuid[]) RETURNS uuid[]
LANGUAGE sql STABLE
SET plan_cache_mode = force_custom_plan
AS $$
  SELECT COALESCE(array_agg(e.id), '{}') FROM webhook_endpoints e
  WHERE e.id = ANY (ids) AND e.failing_since IS NOT NULL
$$;
