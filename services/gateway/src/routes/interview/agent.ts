import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import type { AgentRef, RunCommandResponse } from "@evalp/proto/interview/v1/agent";
import { type TSchema, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { callOptions } from "../../http/call.js";
import { iso } from "../../http/timestamps.js";
import { toAppError } from "../../plugins/errors.js";
import { parseJsonBody, RequestValidationError } from "../../validation/json-body.js";
import type { PydanticItem } from "../../validation/pydantic-errors.js";
import { compileRequestValidator, StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import {
  COMMON_ERRORS,
  DateTime,
  EnvParams,
  ErrorBody,
  IdempotentHeaders,
  OptionalIdempotencyHeaders,
  Uuid,
  ValidationErrorBody,
} from "../schemas.js";
import { receiveFrames } from "./frames.js";
import { send } from "./hub.js";
import { participantRef } from "./participant.js";
import { EntryBody, entryJson, SnapshotBody, SnapshotEnvelope, snapshotJson } from "./views.js";

const ENV = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";
export const AGENT_REALTIME_PATH = "/v1/agent/realtime";
const AGENT_INTERVIEW = "/v1/agent/interview";
const tags = ["agent"];
const ERRORS = {
  401: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  422: Type.Union([ValidationErrorBody, ErrorBody]),
  429: ErrorBody,
  503: ErrorBody,
};

const Text = Type.String({ minLength: 1, maxLength: 10_000 });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const FreeObject = Type.Record(Type.String(), Type.Unknown());

/** Contract §9's commands: each `{type, id, …}` with exactly its fields. */
const COMMAND_FIELDS: Record<string, Record<string, TSchema>> = {
  utterance: {
    speaker: StringEnum(["agent", "participant"]),
    modality: StringEnum(["voice", "text"]),
    text: Text,
    started_at: DateTime,
    ended_at: Type.Optional(DateTime),
    interrupted: Type.Optional(Type.Boolean()),
  },
  propose: {
    question_id: Name,
    expected_revision: Type.Integer({ minimum: 0 }),
    proposed_answer: FreeObject,
    confirmation_text: Text,
  },
  resolve: { proposal_id: Uuid, decision: StringEnum(["confirm", "reject"]), evidence_entry_id: Uuid },
  clarify: {
    question_id: Name,
    clarification_type: StringEnum(["definition", "repeat", "rephrase"]),
    text: Text,
  },
  consistency_follow_up: { question_ids: Type.Array(Name, { minItems: 1, maxItems: 100 }), text: Text },
  scenario_follow_up: { scenario_id: Name, text: Text },
  scenario_evidence: {
    scenario_id: Name,
    criterion_id: Name,
    entry_ids: Type.Array(Uuid, { minItems: 1, maxItems: 100 }),
    summary: Text,
  },
  scenario_gap: { scenario_id: Name, criterion_id: Name, reason: Text },
  report: {
    usage: Type.Optional(
      Type.Array(
        Type.Object(
          { provider: Name, model: Name, unit: Name, quantity: Type.Number({ minimum: 0 }) },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          { provider: Name, code: Name, message: Type.String({ maxLength: 10_000 }) },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
    latency: Type.Optional(
      Type.Object(
        {
          eou_ms: Type.Optional(Type.Number({ minimum: 0 })),
          llm_ttft_ms: Type.Optional(Type.Number({ minimum: 0 })),
          tts_ttfb_ms: Type.Optional(Type.Number({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  pause: { reason: Name },
  resume: { reason: Name },
};
export const COMMAND_TYPES = Object.keys(COMMAND_FIELDS);

/** What every command has; its other fields depend on `type`. */
const CommandHead = Type.Object(
  { type: StringEnum(COMMAND_TYPES), id: Name },
  { additionalProperties: true, title: "AgentCommand" },
);
const validateHead = compileRequestValidator({ body: CommandHead });
const validators = new Map(
  Object.entries(COMMAND_FIELDS).map(([type, fields]) => [
    type,
    compileRequestValidator({
      body: Type.Object({ type: Type.Literal(type), id: Name, ...fields }, { additionalProperties: false }),
    }),
  ]),
);

export type AgentCommand = { type: string; id: string } & Record<string, unknown>;

/** A command's problems in the Pydantic shape, `loc` starting with `where` (`body` or `frame`). */
export function commandProblems(value: unknown, where: "body" | "frame"): PydanticItem[] {
  const at = (items: PydanticItem[]) =>
    items.map((item) => ({ ...item, loc: [where, ...item.loc.slice(1)] }));
  const parts = (body: unknown) => ({ body, query: {}, params: {}, headers: {} });
  const head = validateHead(parts(value));
  if (head.length > 0) return at(head);
  const type = (value as { type: string }).type;
  const problems = validators.get(type)?.(parts(value)) ?? [];
  if (problems.length > 0) return at(problems);
  const command = value as { started_at?: string; ended_at?: string };
  if (type === "utterance" && command.ended_at !== undefined && command.started_at !== undefined) {
    if (new Date(command.ended_at) < new Date(command.started_at)) {
      const error = "ended_at is before started_at";
      return [
        {
          loc: [where, "ended_at"],
          msg: `Value error, ${error}`,
          type: "value_error",
          input: command.ended_at,
          ctx: { error },
        },
      ];
    }
  }
  return [];
}

/** The agent session a request's verified agent token is bound to. */
export function agentRef(request: FastifyRequest): AgentRef {
  const agent = request.agent;
  if (!agent) throw new Error("agent route without a verified agent");
  return { agentSessionId: agent.sessionId, evaluationId: agent.evaluationId } as AgentRef;
}

/** `{"type":"ack","id","entry"?,"interview"}` (contract §9). */
function ackFrame(id: string, answer: RunCommandResponse) {
  return {
    type: "ack",
    id,
    ...(answer.entry ? { entry: entryJson(answer.entry) } : {}),
    interview: snapshotJson(answer.interview),
  };
}

const AckBody = Type.Object(
  { type: Type.Literal("ack"), id: Type.String(), entry: Type.Optional(EntryBody), interview: SnapshotBody },
  { title: "AgentAck" },
);

/** A validation error in the service's answer speaks of `body`; on the socket it speaks of `frame`. */
function atFrame(error: AppError): AppError {
  if (error.code !== "validation_error" || !Array.isArray(error.context.detail)) return error;
  const detail = (error.context.detail as PydanticItem[]).map((item) => ({
    ...item,
    loc: ["frame", ...item.loc.slice(1)],
  }));
  return new AppError(error.code, error.message, { ...error.context, detail });
}

/**
 * The agent side (contract §9): agent sessions, the price table, the HTTP mirror of commands and
 * the snapshot, the participant's confirm/reject of a proposal, and the agent's WebSocket.
 * Every answer that carries a new revision is pushed to both sides' sockets (`state`).
 */
export function agentRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;
  const hub = deps.hub;

  /** Runs one command; `receivedAt` is when the gateway got it (api latency starts there). */
  async function run(request: FastifyRequest, command: AgentCommand, receivedAt: Date) {
    const ref = agentRef(request);
    const answer = await agent.runCommand(
      { agent: ref, command: command as never, receivedAt: timestampFromDate(receivedAt) },
      callOptions(request),
    );
    const ack = ackFrame(command.id, answer);
    hub.deliverState(ref.evaluationId, ack.interview);
    return { ack, replayed: answer.replayed };
  }

  app.post(
    `${ENV}/evaluations/:evaluation_id/agent-sessions`,
    {
      config: { access: { auth: "operator", scope: "interviews:agent", idempotency: "required" } },
      schema: {
        tags,
        summary:
          "Start an agent session on the evaluation's interview: an agent token (supersedes older ones)",
        params: Type.Composite([EnvParams, Type.Object({ evaluation_id: Type.String() })]),
        headers: IdempotentHeaders,
        body: Type.Object(
          { ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 900, default: 900 })) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object(
            {
              agent_session_id: Uuid,
              agent_token: Type.String(),
              server_url: Type.String(),
              expires_at: DateTime,
              interview_id: Uuid,
            },
            { title: "AgentSession" },
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const params = request.params as EnvPath & { evaluation_id: string };
      const body = (request.body ?? {}) as { ttl_seconds?: number };
      const answer = await agent.createAgentSession(
        {
          environment: environmentRef(params),
          evaluationId: params.evaluation_id,
          ttlSeconds: body.ttl_seconds ?? 900,
        },
        callOptions(request),
      );
      hub.supersede(params.evaluation_id, answer.supersededSessionIds);
      return reply.code(201).send({
        agent_session_id: answer.agentSessionId,
        agent_token: answer.agentToken,
        server_url: answer.serverUrl,
        expires_at: iso(answer.expiresAt),
        interview_id: answer.interviewId,
      });
    },
  );

  const Price = Type.Object(
    { provider: Name, model: Name, unit: Name, usd_per_unit: Type.Number({ minimum: 0 }) },
    { additionalProperties: false },
  );
  app.put(
    `${ENV}/agent-prices`,
    {
      config: { access: { auth: "operator", scope: "evaluations:write", idempotency: "optional" } },
      schema: {
        tags,
        summary: "Replace the environment's agent price table (estimated_cost_usd = usage × these prices)",
        params: EnvParams,
        headers: OptionalIdempotencyHeaders,
        body: Type.Object({ prices: Type.Array(Price, { maxItems: 500 }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ prices: Type.Array(Price), updated_at: DateTime }, { title: "AgentPrices" }),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const body = request.body as {
        prices: { provider: string; model: string; unit: string; usd_per_unit: number }[];
      };
      const answer = await agent.putAgentPrices(
        {
          environment: environmentRef(request.params as EnvPath),
          prices: body.prices.map((price) => ({
            provider: price.provider,
            model: price.model,
            unit: price.unit,
            usdPerUnit: price.usd_per_unit,
          })) as never,
        },
        callOptions(request),
      );
      return {
        prices: answer.prices.map((price) => ({
          provider: price.provider,
          model: price.model,
          unit: price.unit,
          usd_per_unit: price.usdPerUnit,
        })),
        updated_at: iso(answer.updatedAt),
      };
    },
  );

  app.get(
    AGENT_INTERVIEW,
    {
      config: { access: { auth: "agent" } },
      schema: {
        tags,
        summary: "The interview's snapshot, as the agent sees it",
        response: { 200: SnapshotEnvelope, ...ERRORS },
      },
    },
    async (request) => {
      const answer = await agent.getAgentInterview({ agent: agentRef(request) }, callOptions(request));
      return { interview: snapshotJson(answer.interview) };
    },
  );

  app.post(
    `${AGENT_INTERVIEW}/commands`,
    {
      config: { access: { auth: "agent", idempotency: "none" } },
      schema: {
        tags,
        summary: "Run one agent command (its `id` has Idempotency-Key semantics): the ack frame",
        body: CommandHead,
        response: { 200: AckBody, ...ERRORS },
      },
    },
    async (request, reply) => {
      const receivedAt = new Date();
      const problems = commandProblems(request.body, "body");
      if (problems.length > 0) throw new RequestValidationError(problems);
      const { ack, replayed } = await run(request, request.body as AgentCommand, receivedAt);
      if (replayed) reply.header("Idempotent-Replayed", "true");
      return ack;
    },
  );

  for (const decision of ["confirm", "reject"] as const) {
    app.post(
      `/v1/participant/interview/proposals/:proposal_id/${decision}`,
      {
        config: { access: { auth: "participant", idempotency: "optional" } },
        schema: {
          tags: ["participant"],
          summary:
            decision === "confirm"
              ? "Confirm the pending proposal: the answer is recorded"
              : "Reject the pending proposal (the question's attempt + 1)",
          params: Type.Object({ proposal_id: Type.String() }),
          headers: OptionalIdempotencyHeaders,
          ...(decision === "reject"
            ? {
                body: Type.Object(
                  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
                  { additionalProperties: false },
                ),
              }
            : {}),
          response: { 200: SnapshotEnvelope, ...ERRORS },
        },
      },
      async (request) => {
        const ref = participantRef(request);
        const body = (request.body ?? {}) as { reason?: string };
        const answer = await agent.resolveProposal(
          {
            participant: ref,
            proposalId: (request.params as { proposal_id: string }).proposal_id,
            decision,
            reason: body.reason,
          },
          callOptions(request),
        );
        const interview = snapshotJson(answer.interview);
        hub.deliverState(ref.evaluationId, interview);
        return { interview };
      },
    );
  }

  app.get(
    AGENT_REALTIME_PATH,
    {
      websocket: true,
      config: { access: { auth: "agent" } },
      // Before the upgrade: an unknown, expired or superseded agent session gets no socket.
      preHandler: async (request) => {
        await agent.getAgentInterview({ agent: agentRef(request) }, callOptions(request));
      },
    },
    (socket: WebSocket, request: FastifyRequest) => agentSocket(socket, request),
  );

  /**
   * One agent socket: frames are commands, handled one at a time in order, each answered with an
   * ack or an error frame (`id` when the frame had one); the socket stays open. The interview
   * plane records the socket as a connection (whichever gateway holds it, the agent owns the
   * voice while it is open); when it closes and no agent socket reopens within
   * AGENT_DISCONNECT_PAUSE_MS, the interview plane pauses the interview (`agent_disconnected`).
   */
  function agentSocket(socket: WebSocket, request: FastifyRequest) {
    const ref = agentRef(request);
    const evaluationId = ref.evaluationId;
    const entry = hub.addAgent(ref, randomUUID(), socket);
    // Commands wait until the connection is recorded: the agent owns the voice before it speaks.
    const opened = agent
      .openAgentConnection({ agent: ref, connectionId: entry.connectionId }, callOptions(request))
      .then(
        (answer) => {
          if (answer.interview) hub.deliverState(evaluationId, snapshotJson(answer.interview));
        },
        (error: unknown) => {
          // Superseded or expired between the upgrade and now: this socket speaks for no one.
          const appError = toAppError(error);
          if (appError.code === "session_superseded" || appError.code === "token_expired") {
            hub.closeAgent(entry, appError.code, appError.message);
          } else {
            // The plane is unreachable just now: the lease renewal opens the connection later.
            request.log.warn({ err: error }, "agent connection not recorded yet");
          }
        },
      );
    const refuse = (id: unknown, error: AppError) =>
      send(socket, {
        type: "error",
        ...(typeof id === "string" ? { id } : {}),
        code: error.code,
        message: error.message,
        context: error.context,
      });
    const handle = async (text: string, receivedAt: Date) => {
      let frame: unknown;
      try {
        frame = parseJsonBody(text);
      } catch (error) {
        if (!(error instanceof RequestValidationError)) throw error;
        const detail = error.items.map((item) => ({ ...item, loc: ["frame", ...item.loc.slice(1)] }));
        refuse(undefined, new AppError("validation_error", "The frame failed validation.", { detail }));
        return;
      }
      const id = (frame as { id?: unknown } | null)?.id;
      const problems = commandProblems(frame, "frame");
      if (problems.length > 0) {
        refuse(id, new AppError("validation_error", "The frame failed validation.", { detail: problems }));
        return;
      }
      try {
        const { ack } = await run(request, frame as AgentCommand, receivedAt);
        send(socket, ack);
      } catch (error) {
        const appError = toAppError(error);
        if (appError.status >= 500) request.log.error({ err: appError.cause ?? error }, "agent frame failed");
        refuse(id, atFrame(appError));
      }
    };
    const frames = receiveFrames(socket, handle, opened);
    const expiresIn = (request.agent?.expiresAt.getTime() ?? 0) - Date.now();
    const expiry = setTimeout(
      () => hub.closeAgent(entry, "token_expired", "The agent token has expired."),
      Math.max(expiresIn, 0),
    );
    socket.on("close", () => {
      clearTimeout(expiry);
      hub.removeAgent(entry);
      // After the commands it carried; a superseded session's connection is gone already.
      frames.after(async () => {
        await agent
          .closeAgentConnection({ agent: ref, connectionId: entry.connectionId }, callOptions(request))
          .catch((error: unknown) => {
            // The plane is unreachable: the connection's lease lapses, with the same outcome.
            request.log.warn({ err: error }, "agent connection close not recorded");
          });
      });
    });
  }
}
