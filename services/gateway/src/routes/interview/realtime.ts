import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { callOptions } from "../../http/call.js";
import { toAppError } from "../../plugins/errors.js";
import { parseJsonBody, RequestValidationError } from "../../validation/json-body.js";
import type { PydanticItem } from "../../validation/pydantic-errors.js";
import { compileRequestValidator, StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { DateTime } from "../schemas.js";
import { receiveFrames } from "./frames.js";
import { participantRef } from "./participant.js";
import { transcriptJson } from "./views.js";

/** The realtime door (contract §5b). */
export const REALTIME_PATH = "/v1/participant/realtime";
/** Close code when the connection token expires while the socket is open (application range). */
export const TOKEN_EXPIRED_CLOSE = 4401;

const UtteranceFrame = Type.Object(
  {
    type: StringEnum(["utterance"]),
    modality: StringEnum(["voice", "text"]),
    text: Type.String({ minLength: 1, maxLength: 10_000 }),
    started_at: DateTime,
    ended_at: Type.Optional(DateTime),
    interrupted: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
type Utterance = {
  modality: string;
  text: string;
  started_at: string;
  ended_at?: string;
  interrupted?: boolean;
};

const validateFrame = compileRequestValidator({ body: UtteranceFrame });

/** A frame's problems in the Pydantic shape, each `loc` starting with `"frame"` (contract §2). */
function frameProblems(text: string): { frame: Utterance | null; problems: PydanticItem[] } {
  const atFrame = (items: PydanticItem[]) =>
    items.map((item) => ({ ...item, loc: ["frame", ...item.loc.slice(1)] }));
  let frame: unknown;
  try {
    frame = parseJsonBody(text);
  } catch (error) {
    if (error instanceof RequestValidationError) return { frame: null, problems: atFrame(error.items) };
    throw error;
  }
  const problems = atFrame(validateFrame({ body: frame, query: {}, params: {}, headers: {} }));
  if (problems.length > 0) return { frame: null, problems };
  const utterance = frame as Utterance;
  if (utterance.ended_at !== undefined && new Date(utterance.ended_at) < new Date(utterance.started_at)) {
    const error = "ended_at is before started_at";
    const item = {
      loc: ["frame", "ended_at"],
      msg: `Value error, ${error}`,
      type: "value_error",
      input: utterance.ended_at,
      ctx: { error },
    };
    return { frame: null, problems: [item] };
  }
  return { frame: utterance, problems: [] };
}

/** Browsers must be answered with one of the subprotocols they offered: any but the token, else it. */
export function selectProtocol(protocols: Set<string>): string | false {
  const offered = [...protocols];
  return offered.find((protocol) => !protocol.startsWith("bearer.")) ?? offered[0] ?? false;
}

/**
 * `GET /v1/participant/realtime`: a WebSocket opened with a connection token (checked, with the
 * session behind it, before the upgrade). Each utterance frame is validated, relayed to the
 * interview plane and answered `{"type":"entry","entry"}`; a bad frame or a refused one is
 * answered `{"type":"error","code","message","context"}` and the socket stays open. Frames are
 * handled one at a time, in order. The socket closes when the connection token expires.
 */
export function realtimeRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const participant = deps.upstreams.interview.participant;

  app.get(
    REALTIME_PATH,
    {
      websocket: true,
      config: { access: { auth: "connection" } },
      // Before the upgrade: a token whose session is unknown (401) or not started (404) gets no socket.
      preHandler: async (request) => {
        await participant.getSnapshot({ participant: participantRef(request) }, callOptions(request));
      },
    },
    (socket: WebSocket, request: FastifyRequest) => {
      const send = (message: unknown) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
      };
      const refuse = (error: AppError) =>
        send({ type: "error", code: error.code, message: error.message, context: error.context });
      const evaluationId = participantRef(request).evaluationId;
      deps.hub.addParticipant(evaluationId, socket);
      const handle = async (text: string) => {
        const { frame, problems } = frameProblems(text);
        if (!frame) {
          refuse(new AppError("validation_error", "The frame failed validation.", { detail: problems }));
          return;
        }
        // While an agent socket is open (on any gateway) the interview plane refuses voice
        // utterances here with `agent_owns_voice` (contract §9).
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
          send({ type: "entry", entry: transcriptJson(answer.entry) });
        } catch (error) {
          const appError = toAppError(error);
          if (appError.status >= 500)
            request.log.error({ err: appError.cause ?? error }, "realtime frame failed");
          refuse(appError);
        }
      };
      receiveFrames(socket, (text) => handle(text));
      const expiresIn = (request.participant?.expiresAt.getTime() ?? 0) - Date.now();
      const expiry = setTimeout(
        () => {
          refuse(new AppError("token_expired", "The connection token has expired."));
          socket.close(TOKEN_EXPIRED_CLOSE, "token_expired");
        },
        Math.max(expiresIn, 0),
      );
      socket.on("close", () => {
        clearTimeout(expiry);
        deps.hub.removeParticipant(evaluationId, socket);
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
