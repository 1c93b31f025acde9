import { beforeAll, describe, expect, it } from "vitest";
import { runAgent } from "../../examples/agent/agent.mjs";
import { agentInterview, createAgentSession, publishedBundleOf, scenarioContents } from "./support/agent.js";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, type Tenant } from "./support/fixtures.js";
import { type InterviewSetup, interviewSetup, openSocket, type Socket } from "./support/interview.js";
import { useStack } from "./support/stack.js";

/** The pause after an agent socket closes, shortened from the contract's 10 s for the test. */
const PAUSE_MS = 400;
const context = useStack({ AGENT_DISCONNECT_PAUSE_MS: String(PAUSE_MS) });
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

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, 0) + ms).toISOString();
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const said = (speaker: string, text: string, start: number, end: number) => ({
  send: { type: "utterance", speaker, modality: "voice", text, started_at: at(start), ended_at: at(end) },
});
const propose = (questionId: string, answer: Record<string, unknown>, text: string) => ({
  send: {
    type: "propose",
    question_id: questionId,
    expected_revision: "$revision",
    proposed_answer: answer,
    confirmation_text: text,
  },
});

/** Reads a participant socket's frames until `stop`, answering proposals with `decisions` in order. */
async function participantLoop(
  socket: Socket,
  act: (interview: any) => Promise<boolean>,
  frames: any[],
): Promise<void> {
  for (;;) {
    const frame = await socket.next();
    frames.push(frame);
    if (frame.type === "state" && (await act(frame.interview))) return;
  }
}

describe("a voice interview end to end", () => {
  it("runs with the reference agent and a participant client, every entry and metric as scripted", async () => {
    await api.call(
      "PUT",
      `${tenant.env}/agent-prices`,
      {
        prices: [
          { provider: "openai", model: "gpt-4o", unit: "input_tokens", usd_per_unit: 0.00001 },
          { provider: "deepgram", model: "nova-2", unit: "seconds", usd_per_unit: 0.0043 },
        ],
      },
      { token: tenant.token },
    );
    const { agentSession, started, taps, participant, evaluation } = await agentInterview(
      api,
      setup,
      agentKey,
    );
    const participantSocket = await openSocket(
      started.connection.server_url,
      started.connection.participant_token,
    );

    // The participant taps: confirm the first proposal, reject the second, confirm the fourth
    // (the third is confirmed by voice); finish once the scenario is covered.
    const decisions = ["confirm", "reject", null, "confirm"];
    const handled = new Set<string>();
    let sawAgent = false;
    let sawScenario = false;
    const participantFrames: any[] = [];
    const participantDone = participantLoop(
      participantSocket,
      async (interview) => {
        if (interview.agent_connected) sawAgent = true;
        if (interview.scenario) sawScenario = true;
        const proposal = interview.pending_proposal;
        if (proposal && !handled.has(proposal.id)) {
          handled.add(proposal.id);
          const decision = decisions[handled.size - 1];
          if (decision === "confirm") expect((await taps.confirm(proposal.id)).status).toBe(200);
          if (decision === "reject") expect((await taps.reject(proposal.id, "Not Beta")).status).toBe(200);
        }
        if (sawScenario && !interview.scenario && interview.ready_to_finish && !interview.pending_proposal) {
          const finished = await participant.finish();
          expect(finished.status, JSON.stringify(finished.body)).toBe(200);
          return true;
        }
        return false;
      },
      participantFrames,
    );

    const { answers } = await runAgent({
      url: agentSession.server_url,
      token: agentSession.agent_token,
      prefix: "e2e",
      steps: [
        said("agent", "How many years of experience do you have?", 0, 2000),
        said("participant", "About five.", 3000, 4000),
        said("agent", "Five years, is that right?", 4500, 5500),
        propose("q1", { value: 5 }, "Five years, is that right?"),
        { await: "proposal_resolved" },
        said("agent", "Which team would you like to join?", 6000, 7000),
        said("participant", "Beta.", 8000, 9000),
        said("agent", "Beta, correct?", 9700, 10_500),
        propose("q2", { option_id: "b" }, "Team Beta?"),
        { await: "proposal_resolved" },
        propose("q2", { option_id: "a" }, "Team Alpha then?"),
        said("participant", "Yes, Alpha.", 11_000, 12_000),
        {
          send: {
            type: "resolve",
            proposal_id: "$proposal",
            decision: "confirm",
            evidence_entry_id: "$participant_utterance",
          },
        },
        { send: { type: "clarify", question_id: "q3" }, expect: "validation_error" },
        {
          send: {
            type: "clarify",
            question_id: "q3",
            clarification_type: "rephrase",
            text: "How good is your SQL?",
          },
        },
        propose("q3", { value: 4 }, "Four out of five?"),
        { await: "proposal_resolved" },
        { await: "item_kind", value: "scenario" },
        {
          send: {
            type: "consistency_follow_up",
            question_ids: ["q1", "q3"],
            text: "Five years, and SQL at four?",
          },
        },
        { send: { type: "scenario_follow_up", scenario_id: "sc1", text: "What happened first?" } },
        { send: { type: "scenario_follow_up", scenario_id: "sc1", text: "And then?" } },
        {
          send: { type: "scenario_follow_up", scenario_id: "sc1", text: "Anything else?" },
          expect: "follow_up_limit_reached",
        },
        {
          send: {
            type: "utterance",
            speaker: "participant",
            modality: "voice",
            text: "I rolled back at once.",
            started_at: at(20_000),
            ended_at: at(25_000),
            interrupted: true,
          },
        },
        {
          send: {
            type: "scenario_evidence",
            scenario_id: "sc1",
            criterion_id: "ownership",
            entry_ids: ["$participant_utterance"],
            summary: "Rolled back on their own initiative.",
          },
        },
        {
          send: {
            type: "report",
            usage: [
              { provider: "openai", model: "gpt-4o", unit: "input_tokens", quantity: 1000 },
              { provider: "deepgram", model: "nova-2", unit: "seconds", quantity: 60 },
            ],
            errors: [{ provider: "deepgram", code: "timeout", message: "no transcript in 5 s" }],
            latency: { eou_ms: 180, llm_ttft_ms: 350, tts_ttfb_ms: 120 },
          },
        },
        {
          send: {
            type: "scenario_gap",
            scenario_id: "sc1",
            criterion_id: "communication",
            reason: "Did not say.",
          },
        },
        { await: "status", value: "completed" },
      ],
    });
    await participantDone;
    await participantSocket.close();
    expect(sawAgent).toBe(true);

    const invalid = answers.find((answer) => answer.frame.code === "validation_error");
    expect(invalid?.frame.context?.detail?.[0]?.loc[0]).toBe("frame");
    expect(invalid?.frame.id).toBe(invalid?.command.id);

    const view = await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, {
      token: tenant.token,
    });
    expect(view.status).toBe(200);
    expect(view.body.status).toBe("completed");
    const entries = view.body.entries as any[];
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => index + 1));
    expect(entries.map((entry) => entry.kind)).toEqual([
      "status_changed",
      "consent",
      "question_asked",
      "utterance",
      "utterance",
      "utterance",
      "proposal",
      "answer_recorded",
      "question_asked",
      "utterance",
      "utterance",
      "utterance",
      "proposal",
      "proposal_rejected",
      "proposal",
      "utterance",
      "answer_recorded",
      "question_asked",
      "clarification",
      "proposal",
      "answer_recorded",
      "clarification",
      "scenario_follow_up",
      "scenario_follow_up",
      "utterance",
      "scenario_evidence",
      "agent_report",
      "scenario_gap",
      "status_changed",
    ]);
    const confirmations = entries
      .filter((entry) => entry.kind === "answer_recorded")
      .map((e) => e.payload.via);
    expect(confirmations).toEqual(["tap", "voice", "tap"]);
    const metrics = view.body.metrics;
    expect(metrics).toMatchObject({
      attempts: 3,
      corrections: 0,
      rejected_proposals: 1,
      clarifications: 1,
      consistency_follow_ups: 1,
      scenario_evidence: 1,
      scenario_gaps: 1,
      usage: { openai: { "gpt-4o": { input_tokens: 1000 } }, deepgram: { "nova-2": { seconds: 60 } } },
      provider_errors: { deepgram: { timeout: 1 } },
    });
    expect(metrics.estimated_cost_usd).toBeCloseTo(1000 * 0.00001 + 60 * 0.0043, 10);
    // Participant end → next agent start: 500 ms and 700 ms (the interrupted turn is excluded).
    expect(metrics.turn_latency_p50_ms).toBeCloseTo(600, 6);
    expect(metrics.turn_latency_p95_ms).toBeCloseTo(690, 6);
    expect(metrics.api_latency_p95_ms).toBeGreaterThanOrEqual(0);

    // Replaying any command id changes nothing: the stored ack comes back.
    const mirror = (command: Record<string, unknown>) =>
      api.post("/v1/agent/interview/commands", command, { token: agentSession.agent_token });
    for (const { command, frame } of answers) {
      const again = await mirror(command);
      if (frame.type === "ack") {
        expect(again.status, JSON.stringify(again.body)).toBe(200);
        expect(again.body).toEqual(frame);
      } else if (frame.code !== "validation_error") {
        expectError(again, 409, String(frame.code));
      }
    }
    const after = await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, {
      token: tenant.token,
    });
    expect(after.body.entries).toEqual(entries);
    expect(participantFrames.some((frame) => frame.type === "state")).toBe(true);
  });
});

describe("agent sockets", () => {
  it("own the voice while open; closed for longer than the delay they pause the interview, reopened resume it", async () => {
    const { agentSession, started, participant } = await agentInterview(api, setup, agentKey);
    const door = await openSocket(started.connection.server_url, started.connection.participant_token);
    let agentSocket = await openSocket(agentSession.server_url, agentSession.agent_token);
    const connected = await agentSocket.next();
    expect(connected).toMatchObject({ type: "state", interview: { agent_connected: true } });
    expect((await participant.start()).body.interview.agent_connected).toBe(true);

    door.ws.send(JSON.stringify({ type: "utterance", modality: "voice", text: "hello", started_at: at(0) }));
    let frame = await door.next();
    while (frame.type === "state") frame = await door.next();
    expect(frame).toMatchObject({ type: "error", code: "agent_owns_voice" });
    door.ws.send(JSON.stringify({ type: "utterance", modality: "text", text: "typed", started_at: at(0) }));
    frame = await door.next();
    while (frame.type === "state") frame = await door.next();
    expect(frame).toMatchObject({ type: "entry", entry: { modality: "text" } });

    // A short drop does not pause.
    await agentSocket.close();
    agentSocket = await openSocket(agentSession.server_url, agentSession.agent_token);
    await sleep(PAUSE_MS * 2);
    expect((await participant.start()).body.interview).toMatchObject({
      status: "in_progress",
      agent_connected: true,
    });

    await agentSocket.close();
    await sleep(PAUSE_MS * 2.5);
    const paused = (await participant.start()).body.interview;
    expect(paused).toMatchObject({
      status: "paused",
      paused_reason: "agent_disconnected",
      agent_connected: false,
    });

    agentSocket = await openSocket(agentSession.server_url, agentSession.agent_token);
    const resumed = await agentSocket.next();
    expect(resumed.interview).toMatchObject({ status: "in_progress", agent_connected: true });
    expect(resumed.interview.paused_reason).toBeUndefined();
    await agentSocket.close();
    await door.close();
  });

  it("a newer agent session closes the older one's socket with session_superseded", async () => {
    const { agentSession, evaluation } = await agentInterview(api, setup, agentKey);
    const old = await openSocket(agentSession.server_url, agentSession.agent_token);
    await old.next();
    const closed = new Promise<number>((done) => old.ws.once("close", (code) => done(code)));
    await createAgentSession(api, tenant, agentKey, evaluation.id);
    let frame = await old.next();
    while (frame.type === "state") frame = await old.next();
    expect(frame).toMatchObject({ type: "error", code: "session_superseded" });
    expect(await closed).toBe(4401);
    await expect(openSocket(agentSession.server_url, agentSession.agent_token)).rejects.toMatchObject({
      status: 401,
    });
  });
});
