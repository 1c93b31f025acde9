-- Up Migration
-- An evaluation runs one bundle on one subject of an environment; the organization and app are
-- kept so that the bundle's contents can be fetched from the platform plane at the first start.
CREATE TABLE evaluations (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  app_id uuid NOT NULL,
  environment_id uuid NOT NULL,
  subject_id uuid NOT NULL,
  bundle_id uuid NOT NULL,
  program_id uuid,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX evaluations_environment ON evaluations (environment_id);

-- A participant session is what a participant token is bound to; it counts against
-- `active_participant_sessions` while unexpired and not completed.
CREATE TABLE participant_sessions (
  id uuid PRIMARY KEY,
  evaluation_id uuid NOT NULL REFERENCES evaluations (id),
  environment_id uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX participant_sessions_active ON participant_sessions (environment_id, expires_at)
  WHERE completed_at IS NULL;
CREATE INDEX participant_sessions_evaluation ON participant_sessions (evaluation_id);

-- One interview per evaluation, created by the participant's first start. It keeps the
-- components it runs on (a bundle's definitions never change, but the interview must not depend
-- on the platform plane after it started), the current answers, and the counter that numbers
-- its entries: the row is taken FOR UPDATE by every step, so `seq` has no gaps.
CREATE TABLE interviews (
  id uuid PRIMARY KEY,
  evaluation_id uuid NOT NULL UNIQUE REFERENCES evaluations (id),
  environment_id uuid NOT NULL,
  bundle_id uuid NOT NULL,
  config_fingerprint text NOT NULL,
  components jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'paused', 'completed', 'ended_incomplete')),
  consented_at timestamptz,
  answers jsonb NOT NULL DEFAULT '{}',
  current_question_id text,
  revision integer NOT NULL DEFAULT 1,
  last_seq bigint NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  last_activity_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  completed_at timestamptz,
  ended_reason text,
  paused_reason text
);
CREATE INDEX interviews_started ON interviews (environment_id, started_at);

CREATE TABLE interview_entries (
  id uuid PRIMARY KEY,
  interview_id uuid NOT NULL REFERENCES interviews (id),
  seq bigint NOT NULL,
  kind text NOT NULL,
  actor text NOT NULL,
  attempt integer NOT NULL DEFAULT 0,
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  question_id text,
  ref_entry_id uuid,
  scenario_id text,
  section_id text,
  UNIQUE (interview_id, seq)
);

-- Behavioral events arrive in batches; the largest batch accepted is the usage of
-- `behavioral_event_batch_size`.
CREATE TABLE behavioral_event_batches (
  id uuid PRIMARY KEY,
  environment_id uuid NOT NULL,
  evaluation_id uuid NOT NULL REFERENCES evaluations (id),
  session_id uuid NOT NULL REFERENCES participant_sessions (id),
  size integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX behavioral_event_batches_environment ON behavioral_event_batches (environment_id, size);

CREATE TABLE behavioral_events (
  id uuid PRIMARY KEY,
  batch_id uuid NOT NULL REFERENCES behavioral_event_batches (id),
  evaluation_id uuid NOT NULL REFERENCES evaluations (id),
  type text NOT NULL,
  occurred_at timestamptz NOT NULL,
  question_id text,
  elapsed_ms double precision,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX behavioral_events_page ON behavioral_events (evaluation_id, created_at DESC, id DESC);

-- Down Migration
DROP TABLE behavioral_events;
DROP TABLE behavioral_event_batches;
DROP TABLE interview_entries;
DROP TABLE interviews;
DROP TABLE participant_sessions;
DROP TABLE evaluations;
