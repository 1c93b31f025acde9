import type { Queryable } from "@evalp/kit";

/**
 * The agent sockets the gateways hold, each with a lease its gateway renews (docs/interview.md#the-agent-protocol): a
 * connection whose lease lapsed counts as closed.
 */

/** Records (or renews) an open agent socket's lease. */
export async function openConnection(
  db: Queryable,
  connection: { id: string; interviewId: string; agentSessionId: string; leaseMs: number },
): Promise<void> {
  await db.query(
    `INSERT INTO agent_connections (id, interview_id, agent_session_id, lease_until)
     VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
     ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until`,
    [connection.id, connection.interviewId, connection.agentSessionId, connection.leaseMs],
  );
}

/** Renews the leases of those connections that have not lapsed; the ids renewed. */
export async function renewConnections(db: Queryable, ids: string[], leaseMs: number): Promise<string[]> {
  const renewed = await db.query<{ id: string }>(
    `UPDATE agent_connections SET lease_until = clock_timestamp() + $2 * interval '1 millisecond'
     WHERE id = ANY($1::uuid[]) AND lease_until > clock_timestamp() RETURNING id`,
    [ids, leaseMs],
  );
  return renewed.rows.map((row) => row.id);
}

/** Closes a connection, only for the session that opened it; its interview's id, when there was one. */
export async function closeConnection(
  db: Queryable,
  connectionId: string,
  agentSessionId: string,
): Promise<string | undefined> {
  const closed = await db.query<{ interview_id: string }>(
    "DELETE FROM agent_connections WHERE id = $1 AND agent_session_id = $2 RETURNING interview_id",
    [connectionId, agentSessionId],
  );
  return closed.rows[0]?.interview_id;
}

/** Closes every connection of the (superseded) agent sessions. */
export async function closeSessionConnections(db: Queryable, agentSessionIds: string[]): Promise<void> {
  await db.query("DELETE FROM agent_connections WHERE agent_session_id = ANY($1::uuid[])", [agentSessionIds]);
}

/** Connections of the interview whose lease has not lapsed. */
export async function liveConnections(db: Queryable, interviewId: string): Promise<number> {
  const found = await db.query<{ live: string }>(
    "SELECT count(*) AS live FROM agent_connections WHERE interview_id = $1 AND lease_until > clock_timestamp()",
    [interviewId],
  );
  return Number(found.rows[0]?.live ?? 0);
}

/**
 * Removes up to `limit` connections whose lease lapsed (their gateway died), each taken by one
 * sweeper only; the interviews they were of.
 */
export async function removeLapsed(db: Queryable, limit: number): Promise<string[]> {
  const lapsed = await db.query<{ interview_id: string }>(
    `DELETE FROM agent_connections WHERE id IN (
       SELECT id FROM agent_connections WHERE lease_until <= clock_timestamp()
       ORDER BY lease_until LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING interview_id`,
    [limit],
  );
  return lapsed.rows.map((row) => row.interview_id);
}
