import { sampleContents } from "@evalp/testing";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import {
  consentedInterview,
  createEvaluation,
  createSession,
  type InterviewSetup,
  interviewSetup,
  openSocket,
  participantClient,
} from "./support/interview.js";
import { createBundle, moveBundle } from "./support/platform.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let setup: InterviewSetup;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  setup = await interviewSetup(api, tenant);
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Reads every page of a seq-paged list, `limit` at a time, checking `next_after_seq` on the way. */
async function allPages(read: (afterSeq: number) => Promise<{ status: number; body: any }>, key: string) {
  const pages: any[][] = [];
  let after = 0;
  for (;;) {
    const page = await read(after);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    const items = page.body[key] as { seq: number }[];
    expect(page.body.next_after_seq).toBe(items.at(-1)?.seq ?? after);
    if (items.length === 0) return pages;
    pages.push(items);
    after = page.body.next_after_seq;
  }
}

describe("evaluations", () => {
  it("run on published bundles only, start pending, and are invisible from other environments", async () => {
    const { bundle: draft } = await createBundle(api, tenant);
    const refused = await api.post(
      `${tenant.env}/evaluations`,
      { subject_id: setup.subjectId, bundle_id: draft.id },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(refused, 409, "bundle_not_published").context).toMatchObject({ status: "draft" });

    const created = await api.post(
      `${tenant.env}/evaluations`,
      { subject_id: setup.subjectId, bundle_id: setup.bundleId },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      environment_id: tenant.environmentId,
      subject_id: setup.subjectId,
      bundle_id: setup.bundleId,
      program_id: null,
      status: "pending",
      created_at: expect.stringMatching(ISO),
    });
    const read = await api.get(`${tenant.env}/evaluations/${created.body.id}`, { token: tenant.token });
    expect(read.body).toEqual(created.body);
    const program = await api.post(
      `${tenant.env}/programs`,
      { name: "Graduates" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    const withProgram = await api.post(
      `${tenant.env}/evaluations`,
      { subject_id: setup.subjectId, bundle_id: setup.bundleId, program_id: program.body.id },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(withProgram.body.program_id).toBe(program.body.id);
    const paths = Object.keys((await api.get("/openapi.json")).body.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        "/v1/participant/interview/start",
        "/v1/participant/interview/transcript",
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations/{evaluation_id}/interview",
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/analytics/summary",
      ]),
    );

    // Another environment of the same app, and another organization, do not see it.
    const other = await api.post(
      `${tenant.app}/environments`,
      { slug: "staging", name: "Staging" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    const otherEnv = `${tenant.app}/environments/${other.body.id}`;
    expectError(
      await api.get(`${otherEnv}/evaluations/${created.body.id}`, { token: tenant.token }),
      404,
      "not_found",
    );
    expectError(
      await api.get(`${otherEnv}/evaluations/${created.body.id}/interview`, { token: tenant.token }),
      404,
      "not_found",
    );
    const stranger = await createTenant(api);
    expectError(
      await api.get(`${tenant.env}/evaluations/${created.body.id}`, { token: stranger.token }),
      404,
      "not_found",
    );
    // Unknown subjects and bundles of another app are 404s.
    const unknown = await api.post(
      `${tenant.env}/evaluations`,
      { subject_id: stranger.organizationId, bundle_id: setup.bundleId },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(unknown, 404, "not_found").context).toMatchObject({ resource: "subject" });
    // The operator view is 404 until the participant starts.
    expect(
      expectError(
        await api.get(`${tenant.env}/evaluations/${created.body.id}/interview`, { token: tenant.token }),
        404,
        "not_found",
      ).context,
    ).toEqual({ resource: "interview" });
  });
});

describe("a whole interview through HTTP and the WebSocket", () => {
  it("start → consent → answers with a correction → finish, then transcript and operator view page by page", async () => {
    const evaluation = await createEvaluation(api, setup);
    const session = await createSession(api, tenant, evaluation.id, 600);
    expect(new Date(session.expires_at).getTime() - Date.now()).toBeGreaterThan(590_000);
    const participant = participantClient(api, session.participant_token);

    // Start: the interview exists, nothing is asked before consent.
    const started = await participant.start();
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const { connection, interview: first } = started.body;
    expect(connection).toEqual({
      participant_token: expect.any(String),
      server_url: `${stack.url.replace("http", "ws")}/v1/participant/realtime`,
      expires_at: expect.stringMatching(ISO),
    });
    expect(new Date(connection.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    expect(first).toEqual({
      available: true,
      consented: false,
      status: "not_started",
      agent_connected: false,
      attempt: 0,
      interview_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      missing: [
        { id: "q1", kind: "question", label: "How many years of experience do you have?", section_id: "s1" },
        { id: "q2", kind: "question", label: "Which team would you like to join?", section_id: "s1" },
        { id: "q3", kind: "question", label: "Rate your SQL", section_id: "s1" },
      ],
      progress: 0,
      ready_to_finish: false,
      revision: 1,
      target_minutes_min: 5,
      target_minutes_max: 10,
    });
    // A second start changes nothing and hands out a fresh connection.
    const again = await participant.start();
    expect(again.body.interview).toEqual(first);
    expect(
      (await api.get(`${tenant.env}/evaluations/${evaluation.id}`, { token: tenant.token })).body.status,
    ).toBe("active");

    const consent = await participant.consent();
    expect(consent.status).toBe(200);
    expect(consent.body.interview).toMatchObject({
      status: "in_progress",
      consented: true,
      revision: 2,
      item_kind: "question",
      item_text: "How many years of experience do you have?",
      question: {
        id: "q1",
        prompt: "How many years of experience do you have?",
        input: "number",
        options: [],
        required: true,
      },
      section: { id: "s1", title: "About you", position: 1, total: 1, count: 3, answered: 0 },
    });

    const q1 = await participant.answer("q1", { value: 3 });
    expect(q1.body.interview).toMatchObject({
      revision: 3,
      question: { id: "q2", input: "single_select" },
      progress: 1 / 3,
    });
    expect(q1.body.interview.question.options).toEqual([
      { id: "a", label: "Alpha" },
      { id: "b", label: "Beta" },
    ]);

    // The participant speaks over the realtime door (their client transcribes).
    const socket = await openSocket(connection.server_url, connection.participant_token);
    socket.ws.send(JSON.stringify({ type: "utterance", modality: "video", started_at: "yesterday" }));
    const refused = await socket.next();
    expect(refused).toMatchObject({ type: "error", code: "validation_error", message: expect.any(String) });
    expect(
      refused.context.detail.map((item: { loc: string[]; type: string }) => [item.loc, item.type]),
    ).toEqual([
      [["frame", "modality"], "enum"],
      [["frame", "text"], "missing"],
      [["frame", "started_at"], "datetime_from_date_parsing"],
    ]);
    socket.ws.send("{not json");
    expect((await socket.next()).context.detail[0]).toMatchObject({
      loc: ["frame", "1"],
      type: "json_invalid",
    });
    const spokenAt = new Date(Date.now() - 2_000).toISOString();
    const endedAt = new Date(Date.now() - 500).toISOString();
    socket.ws.send(
      JSON.stringify({
        type: "utterance",
        modality: "voice",
        text: "Alpha, I think",
        started_at: spokenAt,
        ended_at: endedAt,
      }),
    );
    const spoken = await socket.next();
    expect(spoken).toEqual({
      type: "entry",
      entry: {
        entry_id: expect.any(String),
        seq: 6,
        speaker: "participant",
        modality: "voice",
        text: "Alpha, I think",
        started_at: spokenAt,
        ended_at: endedAt,
        interrupted: false,
      },
    });
    await socket.close();

    const q2 = await participant.answer("q2", { option_id: "a" });
    expect(q2.body.interview).toMatchObject({
      revision: 4,
      question: { id: "q3", input: "scale", min: 1, max: 5 },
    });
    expect(q2.body.interview.missing.map((item: { id: string }) => item.id)).toEqual(["q3"]);

    // Not ready to finish: 409 with what is missing, and nothing written.
    const early = await participant.finish();
    expect(expectError(early, 409, "invalid_transition").context).toEqual({
      from: "in_progress",
      to: "completed",
      allowed: ["paused", "ended"],
      reason: "not_ready_to_finish",
      missing: ["q3"],
    });

    const q3 = await participant.answer("q3", { value: 4 });
    expect(q3.body.interview).toMatchObject({ revision: 5, progress: 1, ready_to_finish: true, missing: [] });
    expect(q3.body.interview.question).toBeUndefined();
    const corrected = await participant.answer("q1", { value: 5 });
    expect(corrected.body.interview).toMatchObject({ revision: 6, ready_to_finish: true });

    const finished = await participant.finish();
    expect(finished.status).toBe(200);
    expect(finished.body.interview).toMatchObject({
      status: "completed",
      available: false,
      unavailable_reason: "completed",
      revision: 7,
      progress: 1,
      ready_to_finish: false,
    });
    expectError(await participant.answer("q1", { value: 6 }), 409, "invalid_transition");
    expectError(await participant.finish(), 409, "invalid_transition");
    expect((await participant.start()).body.interview.status).toBe("completed");
    expect(
      (await api.get(`${tenant.env}/evaluations/${evaluation.id}`, { token: tenant.token })).body.status,
    ).toBe("completed");

    // The transcript, two at a time: every question asked, every answer, the utterance.
    const transcript = (
      await allPages((after) => participant.transcript(`?after_seq=${after}&limit=2`), "items")
    ).flat();
    expect(transcript.map((item) => [item.seq, item.speaker, item.modality, item.text])).toEqual([
      [3, "agent", "text", "How many years of experience do you have?"],
      [4, "participant", "text", "3"],
      [5, "agent", "text", "Which team would you like to join?"],
      [6, "participant", "voice", "Alpha, I think"],
      [7, "participant", "text", "Alpha"],
      [8, "agent", "text", "Rate your SQL"],
      [9, "participant", "text", "4"],
      [10, "participant", "text", "5"],
    ]);
    for (const item of transcript) {
      expect(Object.keys(item).sort()).toEqual(
        [
          "entry_id",
          "seq",
          "speaker",
          "modality",
          "text",
          "started_at",
          "interrupted",
          ...(item.seq === 6 ? ["ended_at"] : []),
        ].sort(),
      );
      expect(item.started_at).toMatch(ISO);
    }
    expect(transcript[3]).toEqual(spoken.entry);

    // The operator view, three entries a page: the same gap-free sequence, and the metrics.
    const operatorPages = await allPages(
      (after) =>
        api.get(`${tenant.env}/evaluations/${evaluation.id}/interview?after_seq=${after}&limit=3`, {
          token: tenant.token,
        }),
      "entries",
    );
    expect(operatorPages.map((page) => page.length)).toEqual([3, 3, 3, 2]);
    const entries = operatorPages.flat() as any[];
    expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(
      entries.map((entry) => [entry.kind, entry.actor, entry.question_id ?? null, entry.attempt]),
    ).toEqual([
      ["status_changed", "participant", null, 0],
      ["consent", "participant", null, 0],
      ["question_asked", "system", "q1", 0],
      ["answer_recorded", "participant", "q1", 1],
      ["question_asked", "system", "q2", 0],
      ["utterance", "participant", "q2", 0],
      ["answer_recorded", "participant", "q2", 1],
      ["question_asked", "system", "q3", 0],
      ["answer_recorded", "participant", "q3", 1],
      ["answer_corrected", "participant", "q1", 2],
      ["status_changed", "participant", null, 0],
    ]);
    expect(entries[0].payload).toEqual({ from: null, to: "active" });
    expect(entries[1].payload).toEqual({ consented: true });
    expect(entries[2]).toMatchObject({
      section_id: "s1",
      payload: {
        speaker: "agent",
        modality: "text",
        text: "How many years of experience do you have?",
        input: "number",
      },
    });
    expect(entries[6].payload).toEqual({
      speaker: "participant",
      modality: "text",
      text: "Alpha",
      answer: { option_id: "a" },
    });
    expect(entries[9]).toMatchObject({
      ref_entry_id: entries[3].id,
      payload: { answer: { value: 5 }, previous_answer: { value: 3 }, text: "5" },
    });
    expect(entries[10].payload).toEqual({ from: "active", to: "completed" });
    for (const entry of entries) {
      expect(entry.occurred_at).toMatch(ISO);
      expect(entry.received_at).toMatch(ISO);
    }
    expect(entries[5].occurred_at).toBe(spokenAt);

    const view = (
      await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, { token: tenant.token })
    ).body;
    expect(view).toMatchObject({
      interview_id: first.interview_id,
      evaluation_id: evaluation.id,
      version_bundle_id: setup.bundleId,
      config_fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      status: "completed",
      started_at: expect.stringMatching(ISO),
      last_activity_at: expect.stringMatching(ISO),
      completed_at: expect.stringMatching(ISO),
      next_after_seq: 11,
    });
    expect(view.ended_reason).toBeUndefined();
    const seconds = Math.floor((Date.parse(view.completed_at) - Date.parse(view.started_at)) / 1000);
    expect(view.metrics).toEqual({
      attempts: 4,
      clarifications: 0,
      consistency_follow_ups: 0,
      corrections: 1,
      duration_seconds: seconds,
      rejected_proposals: 0,
      scenario_evidence: 0,
      scenario_gaps: 0,
      provider_errors: {},
      usage: {},
    });

    // Both events went into the outbox with the change that emitted them.
    const outbox = await stack
      .pool("interview")
      .query("SELECT event_type, payload FROM outbox ORDER BY created_at, id");
    // The interview's own events (its `evaluation.scored` follows asynchronously, docs/results.md).
    const events = outbox.rows.filter(
      (row) => row.payload.data.evaluation_id === evaluation.id && row.event_type.startsWith("interview."),
    );
    expect(events.map((row) => row.event_type)).toEqual([
      "interview.started",
      "interview.agent_requested",
      "interview.completed",
    ]);
    // docs/interview.md#the-agent-protocol: an agent fleet dispatches itself on `interview.agent_requested`.
    expect(events[1].payload.data).toEqual({
      evaluation_id: evaluation.id,
      interview_id: first.interview_id,
    });
    expect(events[2].payload).toMatchObject({
      type: "interview.completed",
      environment_id: tenant.environmentId,
      data: { interview_id: first.interview_id, subject_id: setup.subjectId, status: "completed" },
    });
  });

  it("opens the realtime door with the bearer subprotocol, and refuses utterances before consent", async () => {
    const evaluation = await createEvaluation(api, setup);
    const session = await createSession(api, tenant, evaluation.id);
    const started = await participantClient(api, session.participant_token).start();
    const { server_url, participant_token } = started.body.connection;
    const socket = await openSocket(server_url, participant_token, "subprotocol");
    expect(socket.ws.protocol).toBe("evalp.v1");
    socket.ws.send(
      JSON.stringify({
        type: "utterance",
        modality: "text",
        text: "hello",
        started_at: new Date().toISOString(),
      }),
    );
    expect(await socket.next()).toMatchObject({
      type: "error",
      code: "invalid_transition",
      context: { from: "not_started", reason: "consent_required" },
    });
    await socket.close();
    // The participant token is not a connection token, nor the other way round.
    await expect(openSocket(server_url, session.participant_token)).rejects.toMatchObject({ status: 401 });
    const wrong = await api.post(
      "/v1/participant/interview/consent",
      { consented: true },
      { token: participant_token },
    );
    expectError(wrong, 401, "unauthenticated");
  });
});

describe("the components at work", () => {
  it("validates answers against the question's input, in the Pydantic shape", async () => {
    const { participant } = await consentedInterview(api, setup);
    const wrongType = await participant.answer("q1", { value: "three" });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body).toEqual({
      detail: [
        {
          loc: ["body", "answer", "value"],
          msg: "Input should be a valid number",
          type: "float_type",
          ctx: {},
          input: "three",
        },
      ],
    });
    const wrongOption = await participant.answer("q2", { option_id: "z", note: 1 });
    expect(wrongOption.body.detail).toEqual([
      {
        loc: ["body", "answer", "option_id"],
        msg: "Input should be 'a' or 'b'",
        type: "enum",
        ctx: { expected: "'a' or 'b'" },
        input: "z",
      },
      {
        loc: ["body", "answer", "note"],
        msg: "Extra inputs are not permitted",
        type: "extra_forbidden",
        ctx: {},
        input: 1,
      },
    ]);
    const missing = await participant.answer("q3", {});
    expect(missing.body.detail).toEqual([
      { loc: ["body", "answer", "value"], msg: "Field required", type: "missing", ctx: {}, input: {} },
    ]);
    const high = await participant.answer("q3", { value: 9 });
    expect(high.body.detail[0]).toMatchObject({ type: "less_than_equal", ctx: { le: 5 }, input: 9 });
    const unknown = await participant.answer("q9", { value: 1 });
    expect(unknown.body.detail[0]).toMatchObject({
      loc: ["body", "question_id"],
      type: "value_error",
      input: "q9",
    });
    const shape = await participant.answer("", [] as unknown as Record<string, unknown>);
    expect(shape.body.detail.map((item: { loc: string[] }) => item.loc)).toEqual([
      ["body", "question_id"],
      ["body", "answer"],
    ]);
    // Nothing was recorded by any of them.
    expect((await participant.start()).body.interview).toMatchObject({ revision: 2, progress: 0 });
  });

  it("skips a question by the adaptive policy, and answers before consent are 409", async () => {
    const evaluation = await createEvaluation(api, setup);
    const session = await createSession(api, tenant, evaluation.id);
    const participant = participantClient(api, session.participant_token);
    await participant.start();
    expect(
      expectError(await participant.answer("q1", { value: 1 }), 409, "invalid_transition").context,
    ).toEqual({
      from: "not_started",
      to: "in_progress",
      allowed: ["in_progress"],
      reason: "consent_required",
    });
    await participant.consent();
    await participant.answer("q1", { value: 1 });
    const beta = await participant.answer("q2", { option_id: "b" });
    expect(beta.body.interview).toMatchObject({ progress: 1, ready_to_finish: true, missing: [] });
    expect(beta.body.interview.question).toBeUndefined();
    const skipped = await participant.answer("q3", { value: 3 });
    expect(skipped.body.detail[0]).toMatchObject({
      loc: ["body", "question_id"],
      msg: 'Value error, question "q3" is skipped by the adaptive policy',
    });
    // Back to Alpha: q3 is asked again.
    const alpha = await participant.answer("q2", { option_id: "a" });
    expect(alpha.body.interview).toMatchObject({
      ready_to_finish: false,
      question: { id: "q3" },
      progress: 2 / 3,
    });
  });

  it("records a clarification for a flag rule, and replays a step sent again with its Idempotency-Key", async () => {
    const contents = sampleContents();
    contents.guardrail.rules.push({
      id: "veteran",
      when: {
        op: "cmp",
        fn: "gt",
        args: [
          { op: "var", path: "answers.q1.value" },
          { op: "lit", value: 40 },
        ],
      },
      action: "flag",
    } as never);
    const { bundle } = await createBundle(api, tenant, contents, "Flagging");
    for (const status of ["validated", "published"]) await moveBundle(api, tenant, bundle.id, status);
    const { evaluation, session } = await consentedInterview(api, { ...setup, bundleId: bundle.id });
    const key = ik();
    const send = () =>
      api.post(
        "/v1/participant/interview/answers",
        { question_id: "q1", answer: { value: 45 } },
        {
          token: session.participant_token,
          idempotencyKey: key,
        },
      );
    const first = await send();
    expect(first.body.interview).toMatchObject({
      status: "in_progress",
      revision: 3,
      question: { id: "q2" },
    });
    const replayed = await send();
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body).toEqual(first.body);
    const view = (
      await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, { token: tenant.token })
    ).body;
    expect(view.entries.map((entry: { kind: string }) => entry.kind)).toEqual([
      "status_changed",
      "consent",
      "question_asked",
      "answer_recorded",
      "clarification",
      "question_asked",
    ]);
    expect(view.entries[4]).toMatchObject({
      actor: "system",
      question_id: "q1",
      attempt: 1,
      ref_entry_id: view.entries[3].id,
      payload: { type: "guardrail", rule_id: "veteran" },
    });
    expect(view.metrics).toMatchObject({ attempts: 1, clarifications: 1 });
  });

  it("ends the interview when a guardrail rule says so", async () => {
    const { evaluation, participant } = await consentedInterview(api, setup);
    const ended = await participant.answer("q1", { value: -2 });
    expect(ended.status).toBe(200);
    expect(ended.body.interview).toMatchObject({
      status: "ended",
      available: false,
      unavailable_reason: "ended",
    });
    expect(
      expectError(await participant.answer("q2", { option_id: "a" }), 409, "invalid_transition").context,
    ).toMatchObject({
      from: "ended",
      allowed: [],
    });
    const view = (
      await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, { token: tenant.token })
    ).body;
    expect(view).toMatchObject({ status: "ended_incomplete", ended_reason: "negative-experience" });
    expect(view.entries.at(-1)).toMatchObject({
      kind: "status_changed",
      actor: "system",
      payload: { from: "active", to: "ended_incomplete", reason: "negative-experience" },
    });
    expect(view.metrics).toMatchObject({ attempts: 1, corrections: 0 });
    // Its session no longer counts, and the evaluation takes no new one.
    expect(
      expectError(
        await api.post(
          `${tenant.env}/evaluations/${evaluation.id}/participant-sessions`,
          {},
          { token: tenant.token, idempotencyKey: ik() },
        ),
        409,
        "invalid_transition",
      ).context,
    ).toMatchObject({ from: "ended", reason: "interview_over" });
  });
});
