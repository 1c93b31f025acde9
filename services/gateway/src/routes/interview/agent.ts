import { Type } from "@sinclair/typebox";
import { iso } from "../../http/timestamps.js";
import { RequestValidationError } from "../../validation/json-body.js";
import type { RouteDeps } from "../deps.js";
import { route, writes } from "../index.js";
import { type ENV_PREFIX, environmentRef, ref } from "../wire.js";
import { CommandHead, commandProblems, commandRunner } from "./commands.js";
import type { InterviewApi } from "./index.js";
import { TRANSCRIPT_READ } from "./steps.js";
import {
  agentRef,
  agentSessionJson,
  interviewJson,
  Name,
  priceJson,
  SessionBody,
  seqPage,
  sessionRequest,
  transcriptPageJson,
} from "./wire.js";
import { AgentAck, AgentPrices, AgentSession, InterviewState } from "./wire-schemas.js";

/** Agent sessions are opened with a key whose only scope is `interviews:agent` (docs/authentication.md). */
const AGENT_KEY = writes("interviews:agent");

/** The agent's reads: its token only. */
const AGENT = { auth: "agent" } as const;

/** An agent's command: its own `id` is its key, kept by the interview plane (no Idempotency-Key). */
const COMMAND = { auth: "agent", idempotency: "none" } as const;

/**
 * The operator's side of the agent (docs/interview.md#the-agent-protocol), under ENV: agent sessions and the price table
 * that estimated costs are computed from.
 */
export function agentSetupRoutes(app: InterviewApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;

  route(app, "createAgentSession", "POST /evaluations/:evaluation_id/agent-sessions", AGENT_KEY, {
    body: SessionBody(900),
    answer: ref(AgentSession),
    handler: async ({ request, call }) => {
      const answer = await agent.createAgentSession(sessionRequest(request), call);
      deps.hub.supersede(request.params.evaluation_id, answer.supersededSessionIds);
      return agentSessionJson(answer);
    },
  });

  route(app, "putAgentPrices", "PUT /agent-prices", writes("evaluations:write", "optional"), {
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
    answer: ref(AgentPrices),
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
export function agentRoutes(app: InterviewApi<"/v1/agent">, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;
  const run = commandRunner(deps);

  route(app, "getAgentInterview", "GET /interview", AGENT, {
    answer: ref(InterviewState),
    handler: async ({ request, call }) => {
      const answer = await agent.getAgentInterview({ agent: agentRef(request) }, call);
      return { interview: interviewJson(answer.interview) };
    },
  });

  route(app, "getAgentTranscript", "GET /interview/transcript", AGENT, {
    ...TRANSCRIPT_READ,
    rpc: (request, call) =>
      agent.getAgentTranscript({ agent: agentRef(request), ...seqPage(request.query) }, call),
    json: transcriptPageJson,
  });

  route(app, "runAgentCommand", "POST /interview/commands", COMMAND, {
    body: CommandHead,
    answer: ref(AgentAck),
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
