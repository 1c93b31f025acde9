import { sampleContents } from "@evalp/testing";
import { expect } from "vitest";
import type { ApiClient } from "./client.js";
import { createKey, ik, type Tenant } from "./fixtures.js";
import { createEvaluation, createSession, type InterviewSetup, participantClient } from "./interview.js";
import { createBundle, moveBundle } from "./platform.js";

/** The sample contents with a scenario in the first section (two criteria, two follow-ups). */
export function scenarioContents(options: { requireTap?: boolean } = {}) {
  const contents = sampleContents();
  const section = contents.experience.sections[0] as Record<string, unknown>;
  section.scenarios = [
    {
      id: "sc1",
      prompt: "Tell me about a time you fixed a production incident.",
      framing: "past_behaviour",
      max_follow_ups: 2,
      criteria: [
        { id: "ownership", label: "Takes ownership" },
        { id: "communication", label: "Communicates clearly" },
      ],
    },
  ];
  if (options.requireTap) (contents.experience as Record<string, unknown>).require_tap_confirmation = true;
  return contents;
}

/** A published bundle of `contents`. */
export async function publishedBundleOf(api: ApiClient, tenant: Tenant, contents: unknown): Promise<string> {
  const { bundle } = await createBundle(api, tenant, contents as never);
  for (const status of ["validated", "published"]) {
    const moved = await moveBundle(api, tenant, bundle.id, status);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  }
  return bundle.id as string;
}

/** An agent's HTTP calls with its token: the command mirror, the snapshot and the transcript. */
export function agentClient(api: ApiClient, token: string) {
  return {
    command: (command: Record<string, unknown>) =>
      api.post("/v1/agent/interview/commands", command, { token }),
    snapshot: () => api.get("/v1/agent/interview", { token }),
    transcript: (query = "") => api.get(`/v1/agent/interview/transcript${query}`, { token }),
  };
}

/** The participant's taps on a proposal. */
export function proposalTaps(api: ApiClient, token: string) {
  const path = "/v1/participant/interview/proposals";
  return {
    confirm: (id: string) => api.post(`${path}/${id}/confirm`, undefined, { token }),
    reject: (id: string, reason?: string) =>
      api.post(`${path}/${id}/reject`, reason === undefined ? {} : { reason }, { token }),
  };
}

/** An agent session on an evaluation, opened with an `interviews:agent` key. */
export async function createAgentSession(
  api: ApiClient,
  tenant: Tenant,
  agentKey: string,
  evaluationId: string,
) {
  const created = await api.post(
    `${tenant.env}/evaluations/${evaluationId}/agent-sessions`,
    {},
    { token: agentKey, idempotencyKey: ik() },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as {
    agent_session_id: string;
    agent_token: string;
    server_url: string;
    expires_at: string;
    interview_id: string;
  };
}

/** A consented interview on `setup` with an agent session: everything an agent test needs. */
export async function agentInterview(api: ApiClient, setup: InterviewSetup, agentKey?: string) {
  const key = agentKey ?? (await createKey(api, setup.tenant, ["interviews:agent"], "agent")).secret;
  const evaluation = await createEvaluation(api, setup);
  const session = await createSession(api, setup.tenant, evaluation.id);
  const participant = participantClient(api, session.participant_token);
  const started = await participant.start();
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  expect((await participant.consent()).status).toBe(200);
  const agentSession = await createAgentSession(api, setup.tenant, key, evaluation.id);
  return {
    key,
    evaluation,
    session,
    participant,
    started: started.body,
    agentSession,
    agent: agentClient(api, agentSession.agent_token),
    taps: proposalTaps(api, session.participant_token),
  };
}
