import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { PydanticItem } from "@evalp/kit";
import { type TSchema, Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { callOptions } from "../../upstream.js";
import { compileRequestValidator, StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { DateTime, FreeObject, Uuid } from "../wire.js";
import { ackJson, agentRef, Name, Text } from "./wire.js";

// The agent's commands (docs/interview.md#the-agent-protocol), the same over the HTTP mirror and on the agent's socket:
// what each one holds, and the problems of one that is not what it should be.

/** An utterance's own fields, the agent's (who spoke) and the participant's socket frame alike. */
export const UTTERANCE_FIELDS = {
  modality: StringEnum(["voice", "text"]),
  text: Text,
  started_at: DateTime,
  ended_at: Type.Optional(DateTime),
  interrupted: Type.Optional(Type.Boolean()),
};

/** The agent's commands (docs/interview.md#commands): each `{type, id, …}` with exactly its fields. */
const COMMAND_FIELDS: Record<string, Record<string, TSchema>> = {
  utterance: { speaker: StringEnum(["agent", "participant"]), ...UTTERANCE_FIELDS },
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

/** What every command has; its other fields depend on `type` (checked by `commandProblems`). */
export const CommandHead = Type.Object(
  { type: StringEnum(COMMAND_TYPES), id: Name },
  { additionalProperties: true, title: "AgentCommand" },
);
const validateHead = compileRequestValidator({ body: CommandHead });

/** Each command's whole schema (`{type, id, …}`), by type: what validates it and what documents it. */
export const COMMAND_SCHEMAS: ReadonlyMap<string, TSchema> = new Map(
  Object.entries(COMMAND_FIELDS).map(([type, fields]) => [
    type,
    Type.Object({ type: Type.Literal(type), id: Name, ...fields }, { additionalProperties: false }),
  ]),
);
const validators = new Map(
  [...COMMAND_SCHEMAS].map(([type, body]) => [type, compileRequestValidator({ body })]),
);

/** A command, its fields checked by `commandProblems` (the service takes it as the JSON it is). */
export type AgentCommand = { type: string; id: string };

/** The parts of a request whose body is `body`, for a compiled validator. */
export const asBody = (body: unknown) => ({ body, query: {}, params: {}, headers: {} });

/** An utterance that ends before it starts (its times' shapes checked already), located at `where`. */
export function endedBeforeStarted(
  utterance: { started_at?: string; ended_at?: string },
  where: "body" | "frame",
): PydanticItem[] {
  const { started_at, ended_at } = utterance;
  if (ended_at === undefined || started_at === undefined || new Date(ended_at) >= new Date(started_at)) {
    return [];
  }
  const error = "ended_at is before started_at";
  return [
    {
      loc: [where, "ended_at"],
      msg: `Value error, ${error}`,
      type: "value_error",
      input: ended_at,
      ctx: { error },
    },
  ];
}

/** A command's problems in the Pydantic shape, `loc` starting with `where` (`body` or `frame`). */
export function commandProblems(value: unknown, where: "body" | "frame"): PydanticItem[] {
  const at = (items: PydanticItem[]) =>
    items.map((item) => ({ ...item, loc: [where, ...item.loc.slice(1)] }));
  const head = validateHead(asBody(value));
  if (head.length > 0) return at(head);
  const command = value as AgentCommand;
  const problems = validators.get(command.type)?.(asBody(value)) ?? [];
  if (problems.length > 0) return at(problems);
  const times = command as { started_at?: string; ended_at?: string };
  return command.type === "utterance" ? endedBeforeStarted(times, where) : [];
}

/**
 * Runs the agent's commands: each answered with its ack, whose interview is pushed to both sides'
 * sockets when its revision changed. `receivedAt` is when the gateway got the command (the api
 * latency starts there).
 */
export function commandRunner(deps: RouteDeps) {
  const agent = deps.upstreams.interview.agent;
  return async (request: FastifyRequest, command: AgentCommand, receivedAt: Date) => {
    const ref = agentRef(request);
    const answer = await agent.runCommand(
      { agent: ref, command: command as never, receivedAt: timestampFromDate(receivedAt) },
      callOptions(request),
    );
    const ack = ackJson(command.id, answer);
    deps.hub.deliverState(ref.evaluationId, ack.interview);
    return { ack, replayed: answer.replayed };
  };
}
