import { createWakeLoop, type PoolClient, type WakeLoop, withTransaction } from "@evalp/kit";
import { liveConnections, removeLapsed } from "../db/agent-connections.js";
import { appendEntries } from "../db/entries.js";
import {
  clearAgentPause,
  evaluationOfInterview,
  findInterview,
  lockDueAgentPauses,
  saveInterview,
  scheduleAgentPause,
} from "../db/interviews.js";
import type { InterviewRow } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { participantStatus } from "../flow/statuses.js";

/** docs/interview.md#the-agent-protocol: the pause an agent socket that stays closed causes. */
export const AGENT_DISCONNECTED = "agent_disconnected";

/**
 * How long an agent connection counts as open without its gateway renewing it. Gateways renew
 * every third of it, so a gateway that died is noticed this long after its last renewal.
 */
export const AGENT_LEASE_MS = 6_000;

/**
 * The interview lost an agent connection: with none left, `agent_connected` turns false and the
 * pause is due AGENT_DISCONNECT_PAUSE_MS from now. The changed interview, or null.
 */
export async function connectionLost(deps: Deps, interviewId: string): Promise<InterviewRow | null> {
  return withTransaction(deps.pool, async (tx) => {
    const evaluationId = await evaluationOfInterview(tx, interviewId);
    const interview = evaluationId ? await findInterview(tx, evaluationId, true) : null;
    if (!interview || (await liveConnections(tx, interview.id)) > 0) return null;
    await scheduleAgentPause(tx, interview.id, deps.config.AGENT_DISCONNECT_PAUSE_MS);
    if (interview.agent.connected !== true) return null;
    interview.agent = { ...interview.agent, connected: false };
    interview.revision += 1;
    await saveInterview(tx, interview, new Date());
    return interview;
  });
}

/** The pause is due: an interview in progress with no agent connection pauses (agent_disconnected). */
async function pauseIfStillGone(tx: PoolClient, interview: InterviewRow): Promise<boolean> {
  await clearAgentPause(tx, interview.id);
  const over = interview.status === "completed" || interview.status === "ended_incomplete";
  const running = participantStatus(interview.status, interview.consented_at !== null) === "in_progress";
  if (over || !running || (await liveConnections(tx, interview.id)) > 0) return false;
  const now = new Date();
  interview.status = "paused";
  interview.paused_reason = AGENT_DISCONNECTED;
  await appendEntries(
    tx,
    interview,
    [
      {
        kind: "status_changed",
        actor: "system",
        payload: { from: "active", to: "paused", reason: AGENT_DISCONNECTED },
      },
    ],
    now,
  );
  interview.revision += 1;
  await saveInterview(tx, interview, now);
  return true;
}

/** How often every interview replica looks for lapsed leases and pauses that are due. */
const SWEEP_EVERY_MS = 250;
/** At most this many of each per pass. */
const SWEEP_BATCH = 100;

/**
 * What no single process can be trusted to remember: leases of connections whose gateway died
 * (their sockets count as closed) and pauses that came due. Every replica sweeps; a row goes to
 * one of them (`DELETE … RETURNING`, `FOR UPDATE SKIP LOCKED`), so each pause happens once.
 * `published` hears every interview the sweep changed.
 */
export function createAgentSweeper(deps: Deps, published: (interview: InterviewRow) => void): WakeLoop {
  async function sweep(): Promise<undefined> {
    for (const interviewId of new Set(await removeLapsed(deps.pool, SWEEP_BATCH))) {
      const changed = await connectionLost(deps, interviewId);
      if (changed) published(changed);
    }
    const paused = await withTransaction(deps.pool, async (tx) => {
      const changed: InterviewRow[] = [];
      for (const evaluationId of await lockDueAgentPauses(tx, SWEEP_BATCH)) {
        const interview = await findInterview(tx, evaluationId, true);
        if (interview && (await pauseIfStillGone(tx, interview))) changed.push(interview);
      }
      return changed;
    });
    for (const interview of paused) published(interview);
    return undefined;
  }

  return createWakeLoop({
    logger: deps.logger,
    failure: "agent connection sweep failed",
    intervalMs: SWEEP_EVERY_MS,
    minBackoffMs: SWEEP_EVERY_MS,
    pass: sweep,
  });
}
