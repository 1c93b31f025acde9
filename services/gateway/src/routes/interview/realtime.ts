import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { toAppError } from "../../plugins/errors.js";
import { socketDoor } from "../../realtime/door.js";
import { receiveFrames } from "../../realtime/frames.js";
import {
  atFrame,
  invalidFrame,
  parseFrame,
  sendError,
  sendFrame,
  TOKEN_EXPIRED_CLOSE,
} from "../../realtime/protocol.js";
import type { SocketSlot } from "../../realtime/socket-slots.js";
import { callOptions } from "../../upstream.js";
import { compileRequestValidator, StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { asBody, endedBeforeStarted, UTTERANCE_FIELDS } from "./commands.js";
import type { InterviewApi } from "./index.js";
import { participantRef, transcriptJson } from "./wire.js";

/** The participant's realtime door (docs/interview.md), under `/v1/participant`. */
const REALTIME_PATH = "/v1/participant/realtime";

/** What a participant's socket sends: an utterance (the speaker is the participant). */
export const UtteranceFrame = Type.Object(
  { type: StringEnum(["utterance"]), ...UTTERANCE_FIELDS },
  { additionalProperties: false },
);
const validateFrame = compileRequestValidator({ body: UtteranceFrame });

/** A frame's utterance, or what the frame is answered when it is none. */
function utterance(text: string): { frame: Static<typeof UtteranceFrame> } | { error: AppError } {
  const parsed = parseFrame(text);
  if ("error" in parsed) return parsed;
  const problems = atFrame(validateFrame(asBody(parsed.value)));
  if (problems.length > 0) return { error: invalidFrame(problems) };
  const frame = parsed.value as Static<typeof UtteranceFrame>;
  const order = endedBeforeStarted(frame, "frame");
  return order.length > 0 ? { error: invalidFrame(order) } : { frame };
}

/**
 * `GET /v1/participant/realtime`: a WebSocket opened with a connection token (checked, with the
 * session behind it, before the upgrade). Each utterance frame is validated, relayed to the
 * interview plane and answered `{"type":"entry","entry"}`; a bad frame or a refused one is
 * answered `{"type":"error","code","message","context"}` and the socket stays open. Frames are
 * handled one at a time, in order. The socket closes when the connection token expires, and with
 * 4401 when its participant session is revoked or superseded. A session may hold
 * REALTIME_SOCKETS_PER_SESSION sockets and an address REALTIME_SOCKETS_PER_ADDRESS, across every
 * gateway: one more is refused before the upgrade with 429 `rate_limited`. `startInterview`
 * describes it in the document.
 */
export function realtimeRoutes(app: InterviewApi<"/v1/participant">, deps: RouteDeps): void {
  const participant = deps.upstreams.interview.participant;

  // The slot each upgrade claimed, taken by its socket once open.
  const slots = new WeakMap<FastifyRequest, SocketSlot>();
  // Before the upgrade: a token whose session is unknown or revoked (401) or not started (404)
  // gets no socket, nor does one past the socket caps (429); the caps are counted only for a
  // session that may connect, so refused tokens take no one's slots.
  socketDoor(
    app,
    "/realtime",
    "connection",
    async (request) => {
      const ref = participantRef(request);
      await participant.getSnapshot({ participant: ref }, callOptions(request));
      slots.set(request, await deps.sockets.claim(ref.sessionId, request.ip));
    },
    (socket: WebSocket, request: FastifyRequest) => {
      const { evaluationId, sessionId } = participantRef(request);
      const slot = slots.get(request);
      if (slot) deps.sockets.take(slot);
      deps.hub.addParticipant(evaluationId, socket, sessionId);
      // A revocation between the check and this point reached no socket: asked again now that
      // the hub listens for the next ones.
      participant
        .getSnapshot({ participant: participantRef(request) }, callOptions(request))
        .catch((error: unknown) => {
          const refused = toAppError(error);
          if (refused.status !== 401) return;
          sendError(socket, refused);
          // The reasons of hub.ts's closes: a revoked session's is `session_revoked`.
          socket.close(
            TOKEN_EXPIRED_CLOSE,
            refused.code === "unauthenticated" ? "session_revoked" : refused.code,
          );
        });
      const handle = async (text: string) => {
        const parsed = utterance(text);
        if ("error" in parsed) return sendError(socket, parsed.error);
        const { frame } = parsed;
        // While an agent socket is open (on any gateway) the interview plane refuses voice
        // utterances here with `agent_owns_voice` (docs/interview.md#the-agent-protocol).
        try {
          const answer = await participant.recordUtterance(
            {
              participant: participantRef(request),
              modality: frame.modality,
              text: frame.text,
              startedAt: timestampFromDate(new Date(frame.started_at)),
              endedAt: frame.ended_at ? timestampFromDate(new Date(frame.ended_at)) : undefined,
              interrupted: frame.interrupted ?? false,
            },
            callOptions(request),
          );
          sendFrame(socket, { type: "entry", entry: transcriptJson(answer.entry) });
        } catch (error) {
          const appError = toAppError(error);
          if (appError.status >= 500)
            request.log.error({ err: appError.cause ?? error }, "realtime frame failed");
          sendError(socket, appError);
        }
      };
      receiveFrames(socket, (text) => handle(text));
      const expiresIn = (request.participant?.expiresAt.getTime() ?? 0) - Date.now();
      const expiry = setTimeout(
        () => {
          sendError(socket, new AppError("token_expired", "The connection token has expired."));
          socket.close(TOKEN_EXPIRED_CLOSE, "token_expired");
        },
        Math.max(expiresIn, 0),
      );
      socket.on("close", () => {
        clearTimeout(expiry);
        deps.hub.removeParticipant(evaluationId, socket);
        if (slot) void deps.sockets.release(slot);
        request.log.info(
          {
            route: REALTIME_PATH,
            principal_kind: "participant",
            principal_id: request.participant?.sessionId,
          },
          "realtime closed",
        );
      });
    },
  );
}
