import type { Queryable } from "@evalp/kit";
import { EVALUATION_COLUMNS, type EvaluationRow } from "./rows.js";

/*
 * The agent side of an interview (docs/interview.md#the-agent-protocol): its sessions, the commands it ran (stored with
 * their answers) and the environment's prices of the providers it reports usage of.
 */

/** Supersedes every live agent session of the interview; their ids. */
export async function supersedeSessions(db: Queryable, interviewId: string): Promise<string[]> {
  const older = await db.query<{ id: string }>(
    `UPDATE agent_sessions SET superseded_at = clock_timestamp()
     WHERE interview_id = $1 AND superseded_at IS NULL RETURNING id`,
    [interviewId],
  );
  return older.rows.map((row) => row.id);
}

/** A new agent session of the interview, valid until `expiresAt`. */
export async function insertAgentSession(
  db: Queryable,
  session: { id: string; evaluationId: string; interviewId: string; environmentId: string; expiresAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO agent_sessions (id, evaluation_id, interview_id, environment_id, expires_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [session.id, session.evaluationId, session.interviewId, session.environmentId, session.expiresAt],
  );
}

/** A command's stored final answer: an ack, or an error (docs/errors.md). */
export type StoredCommand = {
  fingerprint: string;
  ack: Buffer | null;
  error: { code: string; message: string; context: Record<string, unknown> } | null;
};

/** The stored answer of an interview's command id, if it ran. */
export async function findCommand(
  db: Queryable,
  interviewId: string,
  commandId: string,
): Promise<StoredCommand | undefined> {
  const found = await db.query<StoredCommand>(
    "SELECT fingerprint, ack, error FROM agent_commands WHERE interview_id = $1 AND command_id = $2",
    [interviewId, commandId],
  );
  return found.rows[0];
}

/** Stores a command's final answer, acked now. */
export async function storeCommand(
  db: Queryable,
  command: { interviewId: string; id: string; type: string; fingerprint: string; receivedAt: Date },
  answer: { ack: Uint8Array | null; error: StoredCommand["error"] },
): Promise<void> {
  await db.query(
    `INSERT INTO agent_commands (interview_id, command_id, type, fingerprint, ack, error, received_at, acked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp())`,
    [
      command.interviewId,
      command.id,
      command.type,
      command.fingerprint,
      answer.ack,
      answer.error,
      command.receivedAt,
    ],
  );
}

/** The 95th percentile of the interview's acked commands' latency (receipt → ack), in ms. */
export async function commandLatencyP95(db: Queryable, interviewId: string): Promise<number | null> {
  const latency = await db.query<{ p95: number | null }>(
    `SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM acked_at - received_at) * 1000) AS p95
     FROM agent_commands WHERE interview_id = $1 AND ack IS NOT NULL`,
    [interviewId],
  );
  return latency.rows[0]?.p95 ?? null;
}

/** A provider's price of one unit. */
export type PriceRow = { provider: string; model: string; unit: string; usd_per_unit: number };

/** The prices of the interview's environment. */
export async function pricesOfInterview(db: Queryable, interviewId: string): Promise<PriceRow[]> {
  const prices = await db.query<PriceRow>(
    `SELECT p.provider, p.model, p.unit, p.usd_per_unit FROM agent_prices p
     JOIN interviews i ON i.environment_id = p.environment_id WHERE i.id = $1`,
    [interviewId],
  );
  return prices.rows;
}

/** Replaces the environment's whole price table. */
export async function replacePrices(
  db: Queryable,
  environmentId: string,
  prices: Array<{ provider: string; model: string; unit: string; usdPerUnit: number }>,
  now: Date,
): Promise<void> {
  await db.query("DELETE FROM agent_prices WHERE environment_id = $1", [environmentId]);
  for (const price of prices) {
    await db.query(
      `INSERT INTO agent_prices (environment_id, provider, model, unit, usd_per_unit, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (environment_id, provider, model, unit) DO UPDATE SET usd_per_unit = EXCLUDED.usd_per_unit`,
      [environmentId, price.provider, price.model, price.unit, price.usdPerUnit, now],
    );
  }
}

/** An agent session with its evaluation, and whether it was superseded or has expired. */
export type AgentSessionRow = EvaluationRow & {
  agent_session_id: string;
  expires_at: Date;
  superseded: boolean;
  expired: boolean;
};

/** An agent session by id, with its evaluation (and that evaluation's interview status). */
export async function findAgentSession(
  db: Queryable,
  agentSessionId: string,
): Promise<AgentSessionRow | undefined> {
  const found = await db.query<AgentSessionRow>(
    `SELECT ${EVALUATION_COLUMNS}, a.id AS agent_session_id, a.expires_at,
            a.superseded_at IS NOT NULL AS superseded, a.expires_at <= clock_timestamp() AS expired
     FROM agent_sessions a JOIN evaluations e ON e.id = a.evaluation_id
     LEFT JOIN interviews i ON i.evaluation_id = e.id
     WHERE a.id = $1`,
    [agentSessionId],
  );
  return found.rows[0];
}
