-- Up Migration
CREATE TABLE templates (
  id uuid PRIMARY KEY,
  app_id uuid NOT NULL,
  name text NOT NULL,
  created_by_user_id uuid,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX templates_app ON templates (app_id);

-- Versioned component contents: each (template, business_id, locale) counts its revisions.
CREATE TABLE definitions (
  id uuid PRIMARY KEY,
  template_id uuid NOT NULL REFERENCES templates (id),
  app_id uuid NOT NULL,
  business_id text NOT NULL,
  locale text NOT NULL,
  name text NOT NULL,
  kind text NOT NULL,
  content jsonb NOT NULL,
  content_hash text NOT NULL,
  revision integer NOT NULL,
  created_by_user_id uuid,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  published_at timestamptz,
  UNIQUE (template_id, business_id, locale, revision)
);
CREATE INDEX definitions_app ON definitions (app_id);

CREATE TABLE bundles (
  id uuid PRIMARY KEY,
  app_id uuid NOT NULL,
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'validated', 'published', 'deprecated', 'archived')),
  fingerprint text NOT NULL,
  revision integer NOT NULL,
  scorecard_version_id uuid NOT NULL REFERENCES definitions (id),
  experience_version_id uuid NOT NULL REFERENCES definitions (id),
  context_version_id uuid NOT NULL REFERENCES definitions (id),
  guardrail_version_id uuid NOT NULL REFERENCES definitions (id),
  adaptive_policy_version_id uuid NOT NULL REFERENCES definitions (id),
  report_template_version_id uuid NOT NULL REFERENCES definitions (id),
  created_by_user_id uuid,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  published_at timestamptz,
  UNIQUE (app_id, name, revision)
);
CREATE INDEX bundles_page ON bundles (app_id, created_at DESC, id DESC);

CREATE TABLE continuous_answers (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL,
  subject_id uuid NOT NULL,
  program_id uuid NOT NULL,
  client_answer_id text NOT NULL,
  question_id text NOT NULL,
  answer jsonb NOT NULL,
  answered_at timestamptz,
  delivery_id uuid,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  UNIQUE (environment_id, subject_id, program_id, client_answer_id)
);

-- Down Migration
DROP TABLE continuous_answers;
DROP TABLE bundles;
DROP TABLE definitions;
DROP TABLE templates;
