-- Up Migration
-- The agent sockets open on an interview, whichever gateway holds them (docs/interview.md#the-agent-protocol on a fleet
-- of gateways): the agent owns the voice while one of them holds a lease. The gateway holding
-- a socket renews its lease; the leases of a gateway that died lapse, and its sockets count as
-- closed.
CREATE TABLE agent_connections (
  id uuid PRIMARY KEY,
  interview_id uuid NOT NULL REFERENCES interviews (id),
  agent_session_id uuid NOT NULL REFERENCES agent_sessions (id),
  lease_until timestamptz NOT NULL,
  opened_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX agent_connections_interview ON agent_connections (interview_id);
CREATE INDEX agent_connections_lease ON agent_connections (lease_until);

-- When the interview pauses (agent_disconnected) because its last agent socket closed, unless
-- one opens first: a stored deadline that every interview replica enforces.
ALTER TABLE interviews ADD COLUMN agent_pause_at timestamptz;
CREATE INDEX interviews_agent_pause_at ON interviews (agent_pause_at) WHERE agent_pause_at IS NOT NULL;

-- Down Migration
DROP INDEX interviews_agent_pause_at;
ALTER TABLE interviews DROP COLUMN agent_pause_at;
DROP TABLE agent_connections;
