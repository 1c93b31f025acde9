-- Up Migration
-- Timestamps are kept at millisecond precision: the API shows milliseconds, and keyset
-- cursors carry (created_at, id) exactly as shown.

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  -- Null while an invited user has not yet set a password.
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);

CREATE TABLE memberships (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  user_id uuid NOT NULL REFERENCES users (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  status text NOT NULL CHECK (status IN ('invited', 'active')),
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  UNIQUE (organization_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

-- Access tokens (and the evp_session cookie, which holds the same token), stored hashed.
CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id),
  token_hash bytea NOT NULL UNIQUE,
  active_organization_id uuid REFERENCES organizations (id),
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id) WHERE revoked_at IS NULL;

CREATE TABLE apps (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  slug text NOT NULL,
  name text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  UNIQUE (organization_id, slug)
);
CREATE INDEX apps_page ON apps (organization_id, created_at DESC, id DESC);

CREATE TABLE environments (
  id uuid PRIMARY KEY,
  app_id uuid NOT NULL REFERENCES apps (id),
  slug text NOT NULL,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  UNIQUE (app_id, slug)
);
CREATE INDEX environments_page ON environments (app_id, created_at DESC, id DESC);

-- Per-environment operational limits (docs/endpoints.md), created with the environment.
CREATE TABLE quotas (
  environment_id uuid PRIMARY KEY REFERENCES environments (id),
  active_participant_sessions integer NOT NULL DEFAULT 100,
  active_subjects integer NOT NULL DEFAULT 10000,
  behavioral_event_batch_size integer NOT NULL DEFAULT 100,
  continuous_event_batch_size integer NOT NULL DEFAULT 100,
  evaluations integer NOT NULL DEFAULT 10000,
  programs integer NOT NULL DEFAULT 100,
  webhook_endpoints integer NOT NULL DEFAULT 20,
  revision integer NOT NULL DEFAULT 1,
  schema_version integer NOT NULL DEFAULT 1,
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL REFERENCES environments (id),
  name text NOT NULL,
  key_prefix text NOT NULL UNIQUE,
  secret_hash bytea NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  created_by_user_id uuid REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  revoked_at timestamptz
);
CREATE INDEX api_keys_page ON api_keys (environment_id, created_at DESC, id DESC);

-- Down Migration
DROP TABLE api_keys;
DROP TABLE quotas;
DROP TABLE environments;
DROP TABLE apps;
DROP TABLE sessions;
DROP TABLE memberships;
DROP TABLE organizations;
DROP TABLE users;
