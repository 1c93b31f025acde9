-- Up Migration
-- The Idempotency-Keys a plane's writes committed under (docs/idempotency.md): the row is inserted
-- in the write's own transaction, so "the write committed" and "the row exists" are one fact, and
-- a retry whose answer was lost is given the stored answer instead of running again.
-- id: the key's identity as the gateway scopes it (caller, method, route, key) and the RPC.
-- outcome: the RPC's answer (its message or its error), sealed with a key only the gateway can
-- give again; null while the write committed but its answer is not stored yet.
CREATE TABLE idempotency_keys (
  id text PRIMARY KEY,
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  outcome bytea
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Down Migration
DROP TABLE idempotency_keys;
