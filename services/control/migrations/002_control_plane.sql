-- Up Migration
-- Invitations and password resets: single-use tokens, stored as SHA-256 only.
CREATE TABLE invitations (
  id uuid PRIMARY KEY,
  membership_id uuid NOT NULL REFERENCES memberships (id),
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX invitations_membership ON invitations (membership_id);

CREATE TABLE password_resets (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id),
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX password_resets_user ON password_resets (user_id);

-- Every control-plane mutation leaves one, written in the transaction of the change.
CREATE TABLE audit_events (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  app_id uuid,
  environment_id uuid,
  actor_kind text NOT NULL,
  actor_id text NOT NULL,
  action text NOT NULL,
  resource_type text NOT NULL,
  resource_id text NOT NULL,
  request_id text,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX audit_events_page ON audit_events (organization_id, created_at DESC, id DESC);

CREATE TABLE subjects (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL REFERENCES environments (id),
  external_id text NOT NULL,
  identity_mode text NOT NULL CHECK (identity_mode IN ('enterprise_managed', 'self_managed', 'anonymous')),
  profile jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  UNIQUE (environment_id, external_id)
);

CREATE TABLE programs (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL REFERENCES environments (id),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX programs_page ON programs (environment_id, created_at DESC, id DESC);

-- The largest batch accepted so far, per batch-size counter (its `usage`, docs/endpoints.md).
ALTER TABLE quotas
  ADD COLUMN largest_behavioral_event_batch integer NOT NULL DEFAULT 0,
  ADD COLUMN largest_continuous_event_batch integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE quotas DROP COLUMN largest_behavioral_event_batch, DROP COLUMN largest_continuous_event_batch;
DROP TABLE programs;
DROP TABLE subjects;
DROP TABLE audit_events;
DROP TABLE password_resets;
DROP TABLE invitations;
