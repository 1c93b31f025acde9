-- Up Migration
-- The agent side (docs/interview.md#the-agent-protocol). `agent` on the interview holds what the participant's view
-- needs of it: whether an agent socket is open, the pending proposal, rejections per question,
-- and per scenario the follow-ups used and the criteria covered.
ALTER TABLE interviews ADD COLUMN agent jsonb NOT NULL DEFAULT '{}';

-- An agent session: a newer one of the same interview supersedes the older ones.
CREATE TABLE agent_sessions (
  id uuid PRIMARY KEY,
  evaluation_id uuid NOT NULL REFERENCES evaluations (id),
  interview_id uuid NOT NULL REFERENCES interviews (id),
  environment_id uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  superseded_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX agent_sessions_interview ON agent_sessions (interview_id);

-- Command ids have Idempotency-Key semantics, scoped to the interview (every agent session of
-- it shares them): the fingerprint of the command and its final answer (an ack or an error).
CREATE TABLE agent_commands (
  interview_id uuid NOT NULL REFERENCES interviews (id),
  command_id text NOT NULL,
  type text NOT NULL,
  fingerprint text NOT NULL,
  ack bytea,
  error jsonb,
  received_at timestamptz NOT NULL,
  acked_at timestamptz NOT NULL,
  PRIMARY KEY (interview_id, command_id)
);

-- The price table of an environment: usage × usd_per_unit is the estimated cost.
CREATE TABLE agent_prices (
  environment_id uuid NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  unit text NOT NULL,
  usd_per_unit double precision NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  PRIMARY KEY (environment_id, provider, model, unit)
);

-- Down Migration
DROP TABLE agent_prices;
DROP TABLE agent_commands;
DROP TABLE agent_sessions;
ALTER TABLE interviews DROP COLUMN agent;
