import { create, toBinary } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { type Logger, natsTraceHeaders } from "@evalp/kit";
import type { Entry, Snapshot, TranscriptEntry } from "@evalp/proto/interview/v1/interview";
import { type RealtimeFrame, RealtimeFrameSchema } from "@evalp/proto/interview/v1/realtime";
import type { NatsConnection } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import { type EntryRow, type InterviewRow, transcriptMessage } from "./db/rows.js";
import { snapshotOfRow } from "./steps.js";

/**
 * Publishes what an interview's open sockets must see (docs/interview.md) on core NATS, one
 * subject per interview (`<prefix>.<evaluation_id>`), for every gateway that holds one of its
 * sockets: new revisions, what the agent says, superseded agent sessions, revoked participant
 * sessions. Published after the
 * change committed; a frame that cannot be published (NATS down) is dropped, and a socket's
 * client catches up from the snapshot and the transcript, as after any disconnection.
 */
export type Realtime = {
  state(evaluationId: string, interview: Snapshot): void;
  agentTurn(evaluationId: string, entry: TranscriptEntry): void;
  superseded(evaluationId: string, agentSessionIds: string[]): void;
  /** Participant sessions revoked or superseded: their sockets close with 4401 on every gateway. */
  revoked(evaluationId: string, participantSessionIds: string[], superseded: boolean): void;
  /** Every socket of the interview is sent an error frame of `code` and closed. */
  closed(evaluationId: string, code: string, message: string): void;
  /** A changed interview row, as its state frame. */
  changed(interview: InterviewRow): void;
  /** The connection to publish on, once there is one. */
  attach(nc: NatsConnection): void;
};

export function createRealtime(options: { subjectPrefix: string; logger: Logger }): Realtime {
  let nc: NatsConnection | null = null;
  const publish = (evaluationId: string, frame: RealtimeFrame["frame"]) => {
    if (!nc || nc.isClosed()) return;
    try {
      nc.publish(
        `${options.subjectPrefix}.${evaluationId}`,
        toBinary(RealtimeFrameSchema, create(RealtimeFrameSchema, { evaluationId, frame })),
        // The gateways relay the frame in a span under the RPC that changed the interview.
        { headers: natsTraceHeaders(context.active()) },
      );
    } catch (error) {
      options.logger.debug({ err: error, evaluation_id: evaluationId }, "realtime frame not published");
    }
  };
  const state = (evaluationId: string, interview: Snapshot) =>
    publish(evaluationId, { case: "state", value: interview });
  return {
    state,
    agentTurn: (evaluationId, entry) => publish(evaluationId, { case: "agentTurn", value: entry }),
    superseded: (evaluationId, agentSessionIds) =>
      publish(evaluationId, {
        case: "superseded",
        value: { $typeName: "evalp.interview.v1.Superseded", agentSessionIds },
      }),
    revoked: (evaluationId, participantSessionIds, superseded) => {
      if (participantSessionIds.length === 0) return;
      publish(evaluationId, {
        case: "revoked",
        value: {
          $typeName: "evalp.interview.v1.RevokedParticipantSessions",
          participantSessionIds,
          superseded,
        },
      });
    },
    closed: (evaluationId, code, message) =>
      publish(evaluationId, {
        case: "closed",
        value: { $typeName: "evalp.interview.v1.Closed", code, message },
      }),
    changed: (interview) => state(interview.evaluation_id, snapshotOfRow(interview)),
    attach(connection) {
      nc = connection;
    },
  };
}

/** An entry the agent spoke (an `utterance` with speaker `agent`), as the participant's transcript shows it. */
function agentTurn(entry: Entry | undefined): TranscriptEntry | undefined {
  if (entry?.kind !== "utterance" || entry.payload?.speaker !== "agent" || !entry.occurredAt)
    return undefined;
  return transcriptMessage({
    id: entry.id,
    seq: Number(entry.seq),
    payload: entry.payload,
    occurred_at: timestampDate(entry.occurredAt),
  } as EntryRow);
}

type Answer = {
  interview?: Snapshot;
  entry?: Entry;
  replayed?: boolean;
  supersededSessionIds?: string[];
};
type Asked = {
  evaluationId?: string;
  participant?: { evaluationId?: string };
  agent?: { evaluationId?: string };
};

/**
 * Server interceptor: every RPC that changes an interview answers with its snapshot, and that
 * answer is what the interview's sockets are sent — whichever RPC it was, so that no change is
 * missed. A replayed agent command changed nothing and sends nothing.
 */
export function realtimeInterceptor(realtime: Realtime): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (
      req.stream ||
      res.stream ||
      req.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS
    ) {
      return res;
    }
    const asked = req.message as Asked;
    const evaluationId = asked.participant?.evaluationId ?? asked.agent?.evaluationId ?? asked.evaluationId;
    const answer = res.message as Answer;
    if (!evaluationId || answer.replayed) return res;
    if (answer.supersededSessionIds && answer.supersededSessionIds.length > 0) {
      realtime.superseded(evaluationId, answer.supersededSessionIds);
    }
    const turn = agentTurn(answer.entry);
    if (turn) realtime.agentTurn(evaluationId, turn);
    if (answer.interview?.$typeName === "evalp.interview.v1.Snapshot")
      realtime.state(evaluationId, answer.interview);
    return res;
  };
}
