import { AppError, isUuid, type PoolClient, type Queryable, withTransaction } from "@evalp/kit";
import type { AgentRef } from "@evalp/proto/interview/v1/agent";
import { findAgentSession } from "../db/agent.js";
import { requireInterview } from "../db/interviews.js";
import type { EvaluationRow } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { flowOf } from "../flow/flow.js";
import type { Step } from "../steps.js";

/** An agent session with its evaluation. */
export type AgentContext = {
  agentSessionId: string;
  expiresAt: Date;
  evaluation: EvaluationRow;
};

const unauthenticated = () => new AppError("unauthenticated", "Authentication required.");

/**
 * The agent session a verified agent token names (docs/interview.md#the-agent-protocol): unknown, or of another
 * evaluation than the token says, is 401 `unauthenticated`; past `expires_at` 401
 * `token_expired`; replaced by a newer agent session 401 `session_superseded`.
 */
export async function requireAgent(db: Queryable, ref: AgentRef | undefined): Promise<AgentContext> {
  if (!ref || !isUuid(ref.agentSessionId) || !isUuid(ref.evaluationId)) throw unauthenticated();
  const row = await findAgentSession(db, ref.agentSessionId);
  if (!row || row.id !== ref.evaluationId) throw unauthenticated();
  if (row.superseded) {
    throw new AppError("session_superseded", "A newer agent session replaced this one.");
  }
  if (row.expired) throw new AppError("token_expired", "The agent session has expired.");
  const { agent_session_id, expires_at, superseded: _s, expired: _e, ...evaluation } = row;
  return { agentSessionId: agent_session_id, expiresAt: expires_at, evaluation };
}

/**
 * Runs one agent step like a participant step: the agent session is checked, then the interview
 * row is taken FOR UPDATE for the whole transaction.
 */
export async function runAgentStep<T>(
  deps: Deps,
  ref: AgentRef | undefined,
  work: (step: Step, agent: AgentContext, tx: PoolClient) => Promise<T>,
): Promise<T> {
  const agent = await requireAgent(deps.pool, ref);
  return withTransaction(deps.pool, async (tx) => {
    const interview = await requireInterview(tx, agent.evaluation.id, true);
    const flow = flowOf(interview.config_fingerprint, interview.components);
    const session = {
      sessionId: agent.agentSessionId,
      expiresAt: agent.expiresAt,
      completedAt: null,
      evaluation: agent.evaluation,
    };
    return work({ tx, interview, flow, session, now: new Date() }, agent, tx);
  });
}
