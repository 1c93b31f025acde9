import { create } from "@bufbuild/protobuf";
import { isUuid, type PoolClient, withTransaction } from "@evalp/kit";
import {
  type CloseAgentConnectionRequest,
  type CloseAgentConnectionResponse,
  CloseAgentConnectionResponseSchema,
  type OpenAgentConnectionRequest,
  type OpenAgentConnectionResponse,
  OpenAgentConnectionResponseSchema,
  type RenewAgentConnectionsRequest,
  type RenewAgentConnectionsResponse,
  RenewAgentConnectionsResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { appendEntries } from "../db/entries.js";
import { findInterview, saveInterview } from "../db/interviews.js";
import type { InterviewRow } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { participantStatus } from "../flow/statuses.js";
import { snapshotOfRow } from "../steps.js";
import { runAgentStep } from "./scope.js";

/** Contract §9: the pause an agent socket that stays closed causes. */
export const AGENT_DISCONNECTED = "agent_disconnected";

/**
 * How long an agent connection counts as open without its gateway renewing it. Gateways renew
 * every third of it, so a gateway that died is noticed this long after its last renewal.
 */
export const AGENT_LEASE_MS = 6_000;

/** Connections of the interview whose lease has not lapsed. */
async function liveConnections(tx: PoolClient, interviewId: string): Promise<number> {
  const found = await tx.query<{ live: string }>(
    "SELECT count(*) AS live FROM agent_connections WHERE interview_id = $1 AND lease_until > clock_timestamp()",
    [interviewId],
  );
  return Number(found.rows[0]?.live ?? 0);
}

/**
 * An agent socket opened (contract §9): the agent owns the voice, the stored pause is called off,
 * and an interview paused because its agent went away resumes. A new revision only when
 * something the snapshot shows changed.
 */
export function openAgentConnection(deps: Deps) {
  return async (req: OpenAgentConnectionRequest): Promise<OpenAgentConnectionResponse> => {
    if (!isUuid(req.connectionId)) throw new Error("the gateway sent a connection id that is no UUID");
    const interview = await runAgentStep(deps, req.agent, async (step, agent) => {
      const { tx, interview, now } = step;
      await tx.query(
        `INSERT INTO agent_connections (id, interview_id, agent_session_id, lease_until)
         VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
         ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until`,
        [req.connectionId, interview.id, agent.agentSessionId, AGENT_LEASE_MS],
      );
      await tx.query("UPDATE interviews SET agent_pause_at = NULL WHERE id = $1", [interview.id]);
      const resumes = interview.status === "paused" && interview.paused_reason === AGENT_DISCONNECTED;
      if (interview.agent.connected === true && !resumes) return interview;
      interview.agent = { ...interview.agent, connected: true };
      if (resumes) {
        interview.status = "active";
        interview.paused_reason = null;
        await appendEntries(
          tx,
          interview,
          [
            {
              kind: "status_changed",
              actor: "system",
              payload: { from: "paused", to: "active", reason: "agent_reconnected" },
            },
          ],
          now,
        );
      }
      interview.revision += 1;
      await saveInterview(tx, interview, now);
      return interview;
    });
    return create(OpenAgentConnectionResponseSchema, { interview: snapshotOfRow(interview) });
  };
}

/** Leases renewed by the gateway that holds the sockets; it is told which it should no longer hold. */
export function renewAgentConnections(deps: Deps) {
  return async (req: RenewAgentConnectionsRequest): Promise<RenewAgentConnectionsResponse> => {
    const ids = req.connectionIds.filter(isUuid);
    const renewed = await deps.pool.query<{ id: string }>(
      `UPDATE agent_connections SET lease_until = clock_timestamp() + $2 * interval '1 millisecond'
       WHERE id = ANY($1::uuid[]) AND lease_until > clock_timestamp() RETURNING id`,
      [ids, AGENT_LEASE_MS],
    );
    const known = new Set(renewed.rows.map((row) => row.id));
    return create(RenewAgentConnectionsResponseSchema, {
      unknownConnectionIds: req.connectionIds.filter((id) => !known.has(id)),
    });
  };
}

/** An agent socket closed: when it was the interview's last, the pause is scheduled. */
export function closeAgentConnection(deps: Deps, published: (interview: InterviewRow) => void) {
  return async (req: CloseAgentConnectionRequest): Promise<CloseAgentConnectionResponse> => {
    const sessionId = req.agent?.agentSessionId ?? "";
    if (!isUuid(req.connectionId) || !isUuid(sessionId)) return create(CloseAgentConnectionResponseSchema);
    // A superseded or expired session still closes what it opened: no agent check here, but a
    // connection is closed only by the session that opened it.
    const closed = await deps.pool.query<{ interview_id: string }>(
      "DELETE FROM agent_connections WHERE id = $1 AND agent_session_id = $2 RETURNING interview_id",
      [req.connectionId, sessionId],
    );
    const interviewId = closed.rows[0]?.interview_id;
    if (interviewId) {
      const changed = await connectionLost(deps, interviewId);
      if (changed) published(changed);
    }
    return create(CloseAgentConnectionResponseSchema);
  };
}

/**
 * The interview lost an agent connection: with none left, `agent_connected` turns false and the
 * pause is due AGENT_DISCONNECT_PAUSE_MS from now. The changed interview, or null.
 */
async function connectionLost(deps: Deps, interviewId: string): Promise<InterviewRow | null> {
  return withTransaction(deps.pool, async (tx) => {
    const found = await tx.query<{ evaluation_id: string }>(
      "SELECT evaluation_id FROM interviews WHERE id = $1",
      [interviewId],
    );
    const evaluationId = found.rows[0]?.evaluation_id;
    const interview = evaluationId ? await findInterview(tx, evaluationId, true) : null;
    if (!interview || (await liveConnections(tx, interview.id)) > 0) return null;
    await tx.query(
      "UPDATE interviews SET agent_pause_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE id = $1",
      [interview.id, deps.config.AGENT_DISCONNECT_PAUSE_MS],
    );
    if (interview.agent.connected !== true) return null;
    interview.agent = { ...interview.agent, connected: false };
    interview.revision += 1;
    await saveInterview(tx, interview, new Date());
    return interview;
  });
}

/** The pause is due: an interview in progress with no agent connection pauses (agent_disconnected). */
async function pauseIfStillGone(tx: PoolClient, interview: InterviewRow): Promise<boolean> {
  await tx.query("UPDATE interviews SET agent_pause_at = NULL WHERE id = $1", [interview.id]);
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
export function createAgentSweeper(deps: Deps, published: (interview: InterviewRow) => void) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  async function sweep(): Promise<void> {
    const lapsed = await deps.pool.query<{ interview_id: string }>(
      `DELETE FROM agent_connections WHERE id IN (
         SELECT id FROM agent_connections WHERE lease_until <= clock_timestamp()
         ORDER BY lease_until LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING interview_id`,
      [SWEEP_BATCH],
    );
    for (const interviewId of new Set(lapsed.rows.map((row) => row.interview_id))) {
      const changed = await connectionLost(deps, interviewId);
      if (changed) published(changed);
    }
    const paused = await withTransaction(deps.pool, async (tx) => {
      const due = await tx.query<{ evaluation_id: string }>(
        `SELECT evaluation_id FROM interviews WHERE agent_pause_at <= clock_timestamp()
         ORDER BY agent_pause_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [SWEEP_BATCH],
      );
      const changed: InterviewRow[] = [];
      for (const { evaluation_id } of due.rows) {
        const interview = await findInterview(tx, evaluation_id, true);
        if (interview && (await pauseIfStillGone(tx, interview))) changed.push(interview);
      }
      return changed;
    });
    for (const interview of paused) published(interview);
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep()
        .catch((error: unknown) => deps.logger.warn({ err: error }, "agent connection sweep failed"))
        .finally(() => {
          running = null;
          schedule();
        });
    }, SWEEP_EVERY_MS);
    timer.unref();
  };

  return {
    start: schedule,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
