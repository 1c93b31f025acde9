-- Up Migration
-- Every write of an endpoint gives the row a version never used before, drawn from a sequence (no
-- row or lock shared between writers). The events consumer keeps each environment's endpoints in
-- memory with the fingerprint of their (id, version) pairs, and stores a batch's deliveries only
-- if the fingerprints it planned with still hold (src/db/endpoint-sets.ts): any endpoint created,
-- changed or deleted since changes its environment's fingerprint. Being a trigger, it also versions
-- the writes of the previous release during a rollout. Rows written before it have no version
-- (fingerprinted as 0) until their next write.
CREATE SEQUENCE webhook_endpoint_versions;
ALTER TABLE webhook_endpoints ADD COLUMN version bigint;

-- A write that changes only the failure streak (`failing_since`) keeps the version: a flaky
-- receiver opens and ends a streak on nearly every attempt, and the consumer reads the streak
-- with each store instead of keeping it.
CREATE FUNCTION version_endpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND to_jsonb(NEW) - '{failing_since,updated_at,version}'::text[]
       = to_jsonb(OLD) - '{failing_since,updated_at,version}'::text[] THEN
    NEW.version := OLD.version;
  ELSE
    NEW.version := nextval('webhook_endpoint_versions');
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER webhook_endpoints_versioned BEFORE INSERT OR UPDATE ON webhook_endpoints
FOR EACH ROW EXECUTE FUNCTION version_endpoint();

-- Down Migration
DROP TRIGGER webhook_endpoints_versioned ON webhook_endpoints;
DROP FUNCTION version_endpoint();
ALTER TABLE webhook_endpoints DROP COLUMN version;
DROP SEQUENCE webhook_endpoint_versions;
