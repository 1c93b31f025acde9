import { beforeAll, describe, expect, it } from "vitest";
import {
  agentClient,
  agentInterview,
  createAgentSession,
  publishedBundleOf,
  scenarioContents,
} from "./support/agent.js";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import {
  createEvaluation,
  createSession,
  type InterviewSetup,
  interviewSetup,
  participantClient,
} from "./support/interview.js";
import { useStack } from "./support/stack.js";

const context = useStack();
let api: ApiClient;
let tenant: Tenant;
let setup: InterviewSetup;
let agentKey: string;

beforeAll(async () => {
  ({ api } = context);
  tenant = await createTenant(api);
  const base = await interviewSetup(api, tenant);
  setup = { ...base, bundleId: await publishedBundleOf(api, tenant, scenarioContents()) };
  agentKey = (await createKey(api, tenant, ["interviews:agent"], "agent")).secret;
});

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, seconds)).toISOString();

describe("agent sessions", () => {
  it("need a started interview and an interviews:agent key; the token opens only /v1/agent/", async () => {
    const evaluation = await createEvaluation(api, setup);
    const path = `${tenant.env}/evaluations/${evaluation.id}/agent-sessions`;
    const early = await api.post(path, {}, { token: agentKey, idempotencyKey: ik() });
    expectError(early, 404, "not_found");
    const session = await createSession(api, tenant, evaluation.id);
    expect((await participantClient(api, session.participant_token).start()).status).toBe(200);
    const wrongScope = await api.post(path, {}, { token: tenant.token, idempotencyKey: ik() });
    expect(wrongScope.status).toBe(201); // an owner's session has every scope
    const created = await createAgentSession(api, tenant, agentKey, evaluation.id);
    expect(created.server_url).toMatch(/^ws:\/\/.*\/v1\/agent\/realtime$/);
    const token = created.agent_token;
    expectError(await api.get("/v1/auth/principal", { token }), 401, "unauthenticated");
    expectError(await api.get("/v1/participant/interview/transcript", { token }), 401, "unauthenticated");
    expectError(
      await api.get("/v1/agent/interview", { token: session.participant_token }),
      401,
      "unauthenticated",
    );
    const snapshot = await api.get("/v1/agent/interview", { token });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(200);
    expect(snapshot.body.interview).toMatchObject({ status: "not_started", agent_connected: false });
    const badRange = await api.post(path, { ttl_seconds: 901 }, { token: agentKey, idempotencyKey: ik() });
    expect(badRange.status).toBe(422);
  });

  it("a newer session supersedes the older: its token answers 401 session_superseded", async () => {
    const { evaluation, agent } = await agentInterview(api, setup, agentKey);
    expect((await agent.snapshot()).status).toBe(200);
    const newer = await createAgentSession(api, tenant, agentKey, evaluation.id);
    expectError(await agent.snapshot(), 401, "session_superseded");
    const refused = await agent.command({ type: "pause", id: "p1", reason: "break" });
    expectError(refused, 401, "session_superseded");
    expect((await api.get("/v1/agent/interview", { token: newer.agent_token })).status).toBe(200);
  });
});

describe("commands over the HTTP mirror", () => {
  it("utterances, proposals with confirm and reject, clarifications, reports, pause and resume", async () => {
    const { agent, participant, taps, evaluation } = await agentInterview(api, setup, agentKey);
    const spoken = await agent.command({
      type: "utterance",
      id: "u1",
      speaker: "agent",
      modality: "voice",
      text: "How many years of experience do you have?",
      started_at: at(0),
      ended_at: at(2),
    });
    expect(spoken.status, JSON.stringify(spoken.body)).toBe(200);
    expect(spoken.body).toMatchObject({
      type: "ack",
      id: "u1",
      entry: { kind: "utterance", actor: "agent" },
    });
    const revision = spoken.body.interview.revision as number;

    const stale = await agent.command({
      type: "propose",
      id: "p0",
      question_id: "q1",
      expected_revision: revision - 1,
      proposed_answer: { value: 5 },
      confirmation_text: "Five years?",
    });
    expect(expectError(stale, 409, "revision_conflict").context).toMatchObject({
      expected_revision: revision - 1,
      current_revision: revision,
    });
    const invalid = await agent.command({
      type: "propose",
      id: "p-bad",
      question_id: "q1",
      expected_revision: revision,
      proposed_answer: { option_id: "x" },
      confirmation_text: "Five years?",
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail.map((item: { loc: string[] }) => item.loc)).toContainEqual([
      "body",
      "proposed_answer",
      "value",
    ]);

    const propose = {
      type: "propose",
      id: "p1",
      question_id: "q1",
      expected_revision: revision,
      proposed_answer: { value: 5 },
      confirmation_text: "Five years, is that right?",
    };
    const proposed = await agent.command(propose);
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
    const proposalId = proposed.body.entry.id as string;
    expect(proposed.body.interview.revision).toBe(revision + 1);
    expect(proposed.body.interview.pending_proposal).toMatchObject({
      id: proposalId,
      kind: "answer",
      confirmation_text: "Five years, is that right?",
      proposed_answer: { value: 5 },
      question: { id: "q1" },
    });

    // Replays: the same id and command is the stored ack; another command under it is refused.
    const replay = await agent.command(propose);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(proposed.body);
    expectError(
      await agent.command({ ...propose, confirmation_text: "Other" }),
      422,
      "idempotency_key_reused",
    );
    const staleReplay = await agent.command({
      type: "propose",
      id: "p0",
      question_id: "q1",
      expected_revision: revision - 1,
      proposed_answer: { value: 5 },
      confirmation_text: "Five years?",
    });
    expectError(staleReplay, 409, "revision_conflict");

    // The same content again (any revision) returns it; another proposal is refused.
    const again = await agent.command({ ...propose, id: "p1-again", expected_revision: 0 });
    expect(again.body.entry.id).toBe(proposalId);
    const other = await agent.command({ ...propose, id: "p2", proposed_answer: { value: 6 } });
    expect(expectError(other, 409, "proposal_pending").context).toMatchObject({ proposal_id: proposalId });

    const seen = await participant.start();
    expect(seen.body.interview.pending_proposal.id).toBe(proposalId);
    const rejected = await taps.reject(proposalId, "It is six");
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body.interview.pending_proposal).toBeUndefined();
    expect(rejected.body.interview.attempt).toBe(1);
    expectError(await taps.confirm(proposalId), 404, "not_found");

    const second = await agent.command({
      ...propose,
      id: "p3",
      expected_revision: rejected.body.interview.revision,
      proposed_answer: { value: 6 },
      confirmation_text: "Six years then?",
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const confirmed = await taps.confirm(second.body.entry.id);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body.interview.question.id).toBe("q2");

    const clarified = await agent.command({
      type: "clarify",
      id: "c1",
      question_id: "q2",
      clarification_type: "rephrase",
      text: "Which team appeals to you most?",
    });
    expect(clarified.body.entry).toMatchObject({ kind: "clarification", question_id: "q2" });
    const consistency = await agent.command({
      type: "consistency_follow_up",
      id: "cf1",
      question_ids: ["q1", "q2"],
      text: "Earlier you said five years?",
    });
    expect(consistency.body.entry.payload.type).toBe("consistency");
    const unknown = await agent.command({
      type: "clarify",
      id: "c2",
      question_id: "nope",
      clarification_type: "repeat",
      text: "x",
    });
    expect(unknown.status).toBe(422);
    const badFrame = await agent.command({
      type: "clarify",
      id: "c3",
      question_id: "q2",
      clarification_type: "shout",
      extra: 1,
    });
    expect(badFrame.status).toBe(422);
    expect(badFrame.body.detail.map((item: { type: string }) => item.type).sort()).toEqual(
      ["enum", "extra_forbidden", "missing"].sort(),
    );

    const paused = await agent.command({ type: "pause", id: "pa1", reason: "participant asked for a break" });
    expect(paused.body.interview).toMatchObject({
      status: "paused",
      paused_reason: "participant asked for a break",
    });
    const resumed = await agent.command({ type: "resume", id: "re1", reason: "back" });
    expect(resumed.body.interview.status).toBe("in_progress");
    expect(resumed.body.interview.paused_reason).toBeUndefined();

    const view = await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, {
      token: tenant.token,
    });
    expect(view.status).toBe(200);
    const kinds = view.body.entries.map((entry: { kind: string }) => entry.kind);
    expect(kinds).toEqual([
      "status_changed",
      "consent",
      "question_asked",
      "utterance",
      "proposal",
      "proposal_rejected",
      "proposal",
      "answer_recorded",
      "question_asked",
      "clarification",
      "clarification",
      "status_changed",
      "status_changed",
    ]);
    const recorded = view.body.entries.find((entry: { kind: string }) => entry.kind === "answer_recorded");
    expect(recorded).toMatchObject({ ref_entry_id: second.body.entry.id, payload: { via: "tap" } });
    expect(view.body.metrics).toMatchObject({
      attempts: 1,
      rejected_proposals: 1,
      clarifications: 1,
      consistency_follow_ups: 1,
    });
    expect(view.body.metrics.api_latency_p95_ms).toBeGreaterThanOrEqual(0);
  });

  it("a spoken resolve counts only with a later participant utterance as evidence", async () => {
    const { agent } = await agentInterview(api, setup, agentKey);
    const before = await agent.command({
      type: "utterance",
      id: "u0",
      speaker: "participant",
      modality: "voice",
      text: "Five",
      started_at: at(1),
    });
    const snap = await agent.snapshot();
    const proposed = await agent.command({
      type: "propose",
      id: "p",
      question_id: "q1",
      expected_revision: snap.body.interview.revision,
      proposed_answer: { value: 5 },
      confirmation_text: "Five?",
    });
    const proposalId = proposed.body.entry.id;
    const early = await agent.command({
      type: "resolve",
      id: "r0",
      proposal_id: proposalId,
      decision: "confirm",
      evidence_entry_id: before.body.entry.id,
    });
    expect(expectError(early, 409, "resolve_not_allowed").context.reason).toBe("evidence_before_proposal");
    const mine = await agent.command({
      type: "utterance",
      id: "u1",
      speaker: "agent",
      modality: "voice",
      text: "Five?",
      started_at: at(2),
    });
    const own = await agent.command({
      type: "resolve",
      id: "r1",
      proposal_id: proposalId,
      decision: "confirm",
      evidence_entry_id: mine.body.entry.id,
    });
    expect(expectError(own, 409, "resolve_not_allowed").context.reason).toBe(
      "evidence_not_participant_utterance",
    );
    const yes = await agent.command({
      type: "utterance",
      id: "u2",
      speaker: "participant",
      modality: "voice",
      text: "Yes",
      started_at: at(3),
    });
    const resolved = await agent.command({
      type: "resolve",
      id: "r2",
      proposal_id: proposalId,
      decision: "confirm",
      evidence_entry_id: yes.body.entry.id,
    });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    expect(resolved.body.entry).toMatchObject({
      kind: "answer_recorded",
      ref_entry_id: proposalId,
      payload: { via: "voice", evidence_entry_id: yes.body.entry.id },
    });
  });

  it("require_tap_confirmation refuses every spoken resolve", async () => {
    const tapSetup = {
      ...setup,
      bundleId: await publishedBundleOf(api, tenant, scenarioContents({ requireTap: true })),
    };
    const { agent } = await agentInterview(api, tapSetup, agentKey);
    const snap = await agent.snapshot();
    const proposed = await agent.command({
      type: "propose",
      id: "p",
      question_id: "q1",
      expected_revision: snap.body.interview.revision,
      proposed_answer: { value: 5 },
      confirmation_text: "Five?",
    });
    const yes = await agent.command({
      type: "utterance",
      id: "u",
      speaker: "participant",
      modality: "voice",
      text: "Yes",
      started_at: at(3),
    });
    const refused = await agent.command({
      type: "resolve",
      id: "r",
      proposal_id: proposed.body.entry.id,
      decision: "confirm",
      evidence_entry_id: yes.body.entry.id,
    });
    expect(expectError(refused, 409, "resolve_not_allowed").context.reason).toBe("tap_confirmation_required");
  });
});

describe("scenarios, prices and metrics", () => {
  it("a scenario follows its section's questions, up to max_follow_ups, until evidence or a gap covers it", async () => {
    const { agent, participant, evaluation } = await agentInterview(api, setup, agentKey);
    await participant.answer("q1", { value: 3 });
    await participant.answer("q2", { option_id: "a" });
    const answered = await participant.answer("q3", { value: 4 });
    expect(answered.body.interview).toMatchObject({
      item_kind: "scenario",
      item_text: "Tell me about a time you fixed a production incident.",
      scenario: { id: "sc1", framing: "past_behaviour", follow_ups_used: 0, follow_ups_remaining: 2 },
    });
    expect(answered.body.interview.question).toBeUndefined();
    for (const id of ["f1", "f2"]) {
      const followed = await agent.command({
        type: "scenario_follow_up",
        id,
        scenario_id: "sc1",
        text: "What did you do next?",
      });
      expect(followed.status, JSON.stringify(followed.body)).toBe(200);
      expect(followed.body.entry).toMatchObject({ kind: "scenario_follow_up", scenario_id: "sc1" });
    }
    const over = await agent.command({
      type: "scenario_follow_up",
      id: "f3",
      scenario_id: "sc1",
      text: "And then?",
    });
    expect(expectError(over, 409, "follow_up_limit_reached").context).toMatchObject({
      max_follow_ups: 2,
      follow_ups_used: 2,
    });
    const said = await agent.command({
      type: "utterance",
      id: "u",
      speaker: "participant",
      modality: "voice",
      text: "I rolled back and told everyone.",
      started_at: at(5),
      ended_at: at(9),
    });
    const evidence = await agent.command({
      type: "scenario_evidence",
      id: "e1",
      scenario_id: "sc1",
      criterion_id: "ownership",
      entry_ids: [said.body.entry.id],
      summary: "Rolled back on their own.",
    });
    expect(evidence.body.interview.scenario).toMatchObject({ follow_ups_used: 2, follow_ups_remaining: 0 });
    const unknownEntry = await agent.command({
      type: "scenario_evidence",
      id: "e2",
      scenario_id: "sc1",
      criterion_id: "ownership",
      entry_ids: ["01900000-0000-7000-8000-000000000000"],
      summary: "x",
    });
    expectError(unknownEntry, 404, "not_found");
    expect(unknownEntry.body.detail.context).toEqual({
      resource: "entry",
      entry_id: "01900000-0000-7000-8000-000000000000",
    });
    // Another interview's entry is no more this interview's than an id naming nothing.
    const elsewhere = await agentInterview(api, setup, agentKey);
    const theirs = await elsewhere.agent.command({
      type: "utterance",
      id: "theirs",
      speaker: "participant",
      modality: "voice",
      text: "Mine, not yours.",
      started_at: at(1),
    });
    expect(theirs.status).toBe(200);
    const foreign = await agent.command({
      type: "scenario_evidence",
      id: "e3",
      scenario_id: "sc1",
      criterion_id: "ownership",
      entry_ids: [theirs.body.entry.id],
      summary: "x",
    });
    expectError(foreign, 404, "not_found");
    const gap = await agent.command({
      type: "scenario_gap",
      id: "g1",
      scenario_id: "sc1",
      criterion_id: "communication",
      reason: "Never said how they told others.",
    });
    expect(gap.body.interview.scenario).toBeUndefined();
    expect(gap.body.interview.ready_to_finish).toBe(true);

    const prices = await api.call(
      "PUT",
      `${tenant.env}/agent-prices`,
      { prices: [{ provider: "openai", model: "gpt-4o", unit: "input_tokens", usd_per_unit: 0.00001 }] },
      { token: tenant.token },
    );
    expect(prices.status, JSON.stringify(prices.body)).toBe(200);
    const usage = (quantity: number) => [
      { provider: "openai", model: "gpt-4o", unit: "input_tokens", quantity },
    ];
    await agent.command({
      type: "report",
      id: "r1",
      usage: usage(1000),
      errors: [{ provider: "openai", code: "rate_limited", message: "slow down" }],
      latency: { eou_ms: 200 },
    });
    await agent.command({ type: "report", id: "r2", usage: usage(500), errors: [] });
    const view = async () =>
      (await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, { token: tenant.token })).body;
    let body = await view();
    expect(body.metrics).toMatchObject({
      scenario_evidence: 1,
      scenario_gaps: 1,
      usage: { openai: { "gpt-4o": { input_tokens: 1500 } } },
      provider_errors: { openai: { rate_limited: 1 } },
    });
    expect(body.metrics.estimated_cost_usd).toBeCloseTo(0.015, 10);
    await agent.command({
      type: "report",
      id: "r3",
      usage: [{ provider: "deepgram", model: "nova-2", unit: "seconds", quantity: 60 }],
    });
    body = await view();
    expect(body.metrics.estimated_cost_usd).toBeUndefined();
    const transcript = await participant.transcript();
    expect(transcript.body.items.map((item: { speaker: string }) => item.speaker)).not.toContain(undefined);
  });
});

describe("picking up an interview (docs/interview.md#picking-up-an-interview)", () => {
  it("a replacement agent reloads the whole conversation, paged, and goes on", async () => {
    const { evaluation, participant, agent, session } = await agentInterview(api, setup, agentKey);
    const say = (client: typeof agent, id: string, speaker: string, text: string, second: number) =>
      client.command({
        type: "utterance",
        id,
        speaker,
        modality: "voice",
        text,
        started_at: at(second),
        ended_at: at(second + 1),
      });
    expect((await say(agent, "a1", "agent", "How many years of experience do you have?", 0)).status).toBe(
      200,
    );
    expect((await say(agent, "a2", "participant", "About five", 2)).status).toBe(200);
    expect((await participant.answer("q1", { value: 5 })).status).toBe(200);
    expect((await say(agent, "a3", "agent", "Which team would you like to join?", 4)).status).toBe(200);

    // The first agent drops; a replacement takes over and the first token is refused from then on.
    const replacement = await createAgentSession(api, tenant, agentKey, evaluation.id);
    const replacementClient = agentClient(api, replacement.agent_token);
    const read = replacementClient.transcript;
    expectError(await agent.transcript(), 401, "session_superseded");
    expectError(await agentClient(api, session.participant_token).transcript(), 401, "unauthenticated");
    const badLimit = await read("?limit=0");
    expect(badLimit.status).toBe(422);
    expect(badLimit.body.detail[0].loc).toEqual(["query", "limit"]);

    const reloaded: Record<string, unknown>[] = [];
    let after = 0;
    for (;;) {
      const page = await read(`?after_seq=${after}&limit=2`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      expect(page.body.next_after_seq).toBe(page.body.items.at(-1)?.seq ?? after);
      if (page.body.items.length === 0) break;
      reloaded.push(...page.body.items);
      after = page.body.next_after_seq;
    }
    // Every utterance, both speakers', with the questions asked and the answer, as the participant reads them.
    const theirs = await participant.transcript("?limit=500");
    expect(reloaded).toEqual(theirs.body.items);
    expect(reloaded.map((item) => [item.speaker, item.text])).toEqual([
      ["agent", "How many years of experience do you have?"],
      ["agent", "How many years of experience do you have?"],
      ["participant", "About five"],
      ["participant", "5"],
      ["agent", "Which team would you like to join?"],
      ["agent", "Which team would you like to join?"],
    ]);

    // It goes on where the conversation stands: the next question, from the snapshot it reloads.
    const snapshot = await replacementClient.snapshot();
    expect(snapshot.body.interview.question.id).toBe("q2");
    const proposed = await replacementClient.command({
      type: "propose",
      id: "r1",
      question_id: "q2",
      expected_revision: snapshot.body.interview.revision,
      proposed_answer: { option_id: "a" },
      confirmation_text: "Alpha, is that right?",
    });
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
    expect((await say(replacementClient, "r2", "agent", "Alpha, is that right?", 6)).status).toBe(200);
    const next = await read(`?after_seq=${after}`);
    expect(next.body.items.map((item: { text: string }) => item.text)).toEqual(["Alpha, is that right?"]);
  });
});
