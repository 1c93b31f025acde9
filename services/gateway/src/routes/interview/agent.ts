import { Type } from "@sinclair/typebox";
import { iso } from "../../http/timestamps.js";
import { RequestValidationError } from "../../validation/json-body.js";
import type { RouteDeps } from "../deps.js";
import { environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { EnvParams, ref } from "../schemas.js";
import { CommandHead, commandProblems, commandRunner } from "./commands.js";
import { agentRef, EvaluationParams, Name, SessionBody, sessionRequest, TAG } from "./requests.js";
import { AgentAck, AgentPrices, AgentSession, InterviewState } from "./resources.js";
import { agentSessionJson, interviewJson, priceJson } from "./wire.js";

/**
 * The operator's side of the agent (docs/interview.md#the-agent-protocol), under ENV: agent sessions and the price table
 * that estimated costs are computed from.
 */
export function agentSetupRoutes(app: Api, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;

  route(app, TAG, {
    method: "POST",
    url: "/evaluations/:evaluation_id/agent-sessions",
    operationId: "createAgentSession",
    summary: "Start an agent session",
    description:
      "Starts an agent session on the evaluation's interview (404 before the participant has " +
      "started), valid for `ttl_seconds` (60-900, 900 by default). Its agent token, shown only in " +
      "this answer, is accepted only under `/v1/agent/` and only for this interview; it opens the " +
      "agent's WebSocket at `server_url` (`GET /v1/agent/realtime`, the token as `Authorization: " +
      "Bearer` or subprotocol `bearer.<token>`), whose frames are the commands of the HTTP mirror, " +
      "each answered with an ack or an error frame, and `state` frames on every new revision. A newer " +
      "session supersedes this one: its socket closes with `session_superseded` and its token is " +
      "refused. Every frame is described in `/asyncapi.json`. Requires `interviews:agent` and an " +
      "Idempotency-Key.",
    access: { auth: "operator", scope: "interviews:agent", idempotency: "required" },
    params: EvaluationParams,
    body: SessionBody(900),
    status: 201,
    response: ref(AgentSession),
    responseDescription: "The agent session and its agent token.",
    handler: async ({ request, call }) => {
      const answer = await agent.createAgentSession(sessionRequest(request), call);
      deps.hub.supersede(request.params.evaluation_id, answer.supersededSessionIds);
      return agentSessionJson(answer);
    },
  });

  route(app, TAG, {
    method: "PUT",
    url: "/agent-prices",
    operationId: "putAgentPrices",
    summary: "Replace the agent price table",
    description:
      "Replaces the environment's price table, from which an interview's `estimated_cost_usd` is " +
      "computed (its usage × these prices; null when a usage line has no price). Requires " +
      "`evaluations:write`; an Idempotency-Key is honoured when sent.",
    access: { auth: "operator", scope: "evaluations:write", idempotency: "optional" },
    params: EnvParams,
    body: Type.Object(
      {
        prices: Type.Array(
          Type.Object(
            { provider: Name, model: Name, unit: Name, usd_per_unit: Type.Number({ minimum: 0 }) },
            { additionalProperties: false },
          ),
          { maxItems: 500 },
        ),
      },
      { additionalProperties: false },
    ),
    response: ref(AgentPrices),
    responseDescription: "The price table.",
    handler: async ({ request, call }) => {
      const answer = await agent.putAgentPrices(
        {
          environment: environmentRef(request.params),
          prices: request.body.prices.map((price) => ({
            provider: price.provider,
            model: price.model,
            unit: price.unit,
            usdPerUnit: price.usd_per_unit,
          })),
        },
        call,
      );
      return { prices: answer.prices.map(priceJson), updated_at: iso(answer.updatedAt) };
    },
  });
}

/** `/v1/agent/interview` (docs/interview.md#the-agent-protocol): the agent's HTTP mirror of its socket. */
export function agentRoutes(app: Api, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;
  const run = commandRunner(deps);

  route(app, TAG, {
    method: "GET",
    url: "/interview",
    operationId: "getAgentInterview",
    summary: "Get the interview, as the agent sees it",
    description:
      "The state of the interview the agent token is bound to (401 `session_superseded` once a " +
      "newer agent session replaced it).",
    access: { auth: "agent" },
    response: ref(InterviewState),
    responseDescription: "The interview.",
    handler: async ({ request, call }) => {
      const answer = await agent.getAgentInterview({ agent: agentRef(request) }, call);
      return { interview: interviewJson(answer.interview) };
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/interview/commands",
    operationId: "runAgentCommand",
    summary: "Run an agent command",
    description:
      "Runs one command `{type, id, …}` (an utterance, a proposal, a clarification, a report…; each " +
      "with exactly its fields, 422 otherwise). Its `id` has Idempotency-Key semantics across the " +
      "interview's agent sessions: the same id answers the stored ack (`Idempotent-Replayed: true`). " +
      "Refusals are the contract's errors, e.g. 409 `revision_conflict`, `proposal_pending`, " +
      "`resolve_not_allowed` or `follow_up_limit_reached`.",
    access: { auth: "agent", idempotency: "none" },
    body: CommandHead,
    response: ref(AgentAck),
    responseDescription: "The ack: the entry written, if any, and the interview after the command.",
    errors: [409],
    handler: async ({ request, reply }) => {
      const receivedAt = new Date();
      const problems = commandProblems(request.body, "body");
      if (problems.length > 0) throw new RequestValidationError(problems);
      const { ack, replayed } = await run(request, request.body, receivedAt);
      if (replayed) reply.header("Idempotent-Replayed", "true");
      return ack;
    },
  });
}
