import { signParticipantToken } from "@evalp/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import {
  consentedInterview,
  createEvaluation,
  createSession,
  type InterviewSetup,
  interviewSetup,
  openSocket,
  participantClient,
} from "./support/interview.js";
import { type Stack, startStack } from "./support/stack.js";

/** Every log line of every process, to prove that no token is ever written. */
const lines: string[] = [];
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let setup: InterviewSetup;

beforeAll(async () => {
  stack = await startStack({}, { logLines: lines });
  api = apiClient(stack.urls);
  tenant = await createTenant(api);
  setup = await interviewSetup(api, tenant);
});
afterAll(async () => {
  await stack?.close();
});

/** Sets the environment's limits (all seven, from the current ones) and returns the quotas. */
async function setLimits(who: Tenant, changes: Record<string, number>) {
  const current = await api.get(`${who.env}/quotas`, { token: who.token });
  const updated = await api.patch(
    `${who.env}/quotas`,
    { expected_revision: current.body.revision, limits: { ...current.body.limits, ...changes } },
    { token: who.token, idempotencyKey: ik() },
  );
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  return updated.body;
}

describe("participant tokens", () => {
  it("are accepted only under /v1/participant/, and operator credentials are not accepted there", async () => {
    const evaluation = await createEvaluation(api, setup);
    const session = await createSession(api, tenant, evaluation.id);
    const token = session.participant_token;
    expectError(await api.get("/v1/auth/principal", { token }), 401, "unauthenticated");
    expectError(
      await api.get(`${tenant.env}/evaluations/${evaluation.id}`, { token }),
      401,
      "unauthenticated",
    );
    const key = await createKey(api, tenant, ["evaluations:write"]);
    for (const credential of [{ token: tenant.token }, { apiKey: key.secret }, {}]) {
      expectError(
        await api.post("/v1/participant/interview/start", undefined, credential),
        401,
        "unauthenticated",
      );
    }
    const forged = `${token.slice(0, -4)}AAAA`;
    expectError(
      await api.post("/v1/participant/interview/start", undefined, { token: forged }),
      401,
      "unauthenticated",
    );
    expect((await participantClient(api, token).start()).status).toBe(200);
  });

  it("answer 401 token_expired past exp, and when their session has expired", async () => {
    const evaluation = await createEvaluation(api, setup);
    const session = await createSession(api, tenant, evaluation.id, 60);
    const claims = {
      sessionId: session.session_id,
      evaluationId: evaluation.id,
      environmentId: tenant.environmentId,
    };
    const expired = await signParticipantToken(
      stack.config.JWT_SECRET,
      "participant",
      claims,
      new Date(Date.now() - 1000),
    );
    expectError(await participantClient(api, expired).start(), 401, "token_expired");
    expectError(await participantClient(api, expired).transcript(), 401, "token_expired");
    const connection = await signParticipantToken(
      stack.config.JWT_SECRET,
      "connection",
      claims,
      new Date(Date.now() - 1000),
    );
    await expect(
      openSocket(`${stack.url.replace("http", "ws")}/v1/participant/realtime`, connection),
    ).rejects.toMatchObject({
      status: 401,
      body: expect.stringContaining("token_expired"),
    });
    // The token still verifies, but the session behind it is over.
    await stack
      .pool("interview")
      .query("UPDATE participant_sessions SET expires_at = now() - interval '1 second' WHERE id = $1", [
        session.session_id,
      ]);
    expectError(await participantClient(api, session.participant_token).start(), 401, "token_expired");
    // A well-signed token of a session this platform does not know.
    const stray = await signParticipantToken(
      stack.config.JWT_SECRET,
      "participant",
      { ...claims, sessionId: evaluation.id },
      new Date(Date.now() + 60_000),
    );
    expectError(await participantClient(api, stray).start(), 401, "unauthenticated");
    // ttl_seconds is bounded to 1 h.
    const tooLong = await api.post(
      `${tenant.env}/evaluations/${evaluation.id}/participant-sessions`,
      { ttl_seconds: 3601 },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.detail[0]).toMatchObject({
      loc: ["body", "ttl_seconds"],
      type: "less_than_equal",
      ctx: { le: 3600 },
    });
  });
});

describe("the realtime door", () => {
  it("answers a GET that asks for no upgrade with the contract's 404, not an empty body", async () => {
    const { started } = await consentedInterview(api, setup);
    const plain = await api.get("/v1/participant/realtime", { token: started.connection.participant_token });
    expect(expectError(plain, 404, "not_found").context).toEqual({ resource: "route" });
    // Without a credential it is refused before anything else.
    expectError(await api.get("/v1/participant/realtime"), 401, "unauthenticated");
  });
});

describe("quotas of the interview plane", () => {
  it("bound evaluations and active participant sessions, counted from this plane's rows", async () => {
    const own = await createTenant(api);
    const ownSetup = await interviewSetup(api, own);
    const evaluation = await createEvaluation(api, ownSetup);
    await setLimits(own, { evaluations: 1, active_participant_sessions: 1 });
    const over = await api.post(
      `${own.env}/evaluations`,
      { subject_id: ownSetup.subjectId, bundle_id: ownSetup.bundleId },
      { token: own.token, idempotencyKey: ik() },
    );
    expect(expectError(over, 409, "quota_exceeded").context).toEqual({
      counter: "evaluations",
      limit: 1,
      usage: 1,
    });

    // A new session of the same evaluation supersedes the older one: it needs no more quota.
    await createSession(api, own, evaluation.id);
    const session = await createSession(api, own, evaluation.id);
    await setLimits(own, { evaluations: 2 });
    const another = await createEvaluation(api, ownSetup);
    const second = await api.post(
      `${own.env}/evaluations/${another.id}/participant-sessions`,
      {},
      { token: own.token, idempotencyKey: ik() },
    );
    expect(expectError(second, 409, "quota_exceeded").context).toEqual({
      counter: "active_participant_sessions",
      limit: 1,
      usage: 1,
    });
    let quotas = await api.get(`${own.env}/quotas`, { token: own.token });
    expect(quotas.body.usage).toMatchObject({ evaluations: 2, active_participant_sessions: 1 });

    // A session stops counting once it expires.
    await stack
      .pool("interview")
      .query("UPDATE participant_sessions SET expires_at = now() - interval '1 second' WHERE id = $1", [
        session.session_id,
      ]);
    quotas = await api.get(`${own.env}/quotas`, { token: own.token });
    expect(quotas.body.usage.active_participant_sessions).toBe(0);
    await createSession(api, own, another.id);
  });

  it("bounds behavioral event batches (422 batch_too_large) and reports the largest accepted", async () => {
    const own = await createTenant(api);
    const ownSetup = await interviewSetup(api, own);
    const evaluation = await createEvaluation(api, ownSetup);
    const session = await createSession(api, own, evaluation.id);
    const participant = participantClient(api, session.participant_token);
    await setLimits(own, { behavioral_event_batch_size: 2 });
    const event = (type: string) => ({ type, occurred_at: new Date().toISOString() });
    const over = await participant.events([event("a"), event("b"), event("c")]);
    expect(expectError(over, 422, "batch_too_large").context).toMatchObject({ limit: 2 });
    expect((await participant.events([event("a")])).body).toEqual({ accepted: 1 });
    const accepted = await participant.events([event("a"), event("b")]);
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ accepted: 2 });
    const quotas = await api.get(`${own.env}/quotas`, { token: own.token });
    expect(quotas.body.usage.behavioral_event_batch_size).toBe(2);
  });
});

describe("behavioral events", () => {
  it("round-trip: validated per the interface, read by staff newest first, privacy-minimized", async () => {
    const evaluation = await createEvaluation(api, setup);
    const session = await createSession(api, tenant, evaluation.id);
    const participant = participantClient(api, session.participant_token);
    const invalid = await participant.events([
      { type: "x".repeat(65), occurred_at: "now", question_id: "", elapsed_ms: 86_400_001, extra: true },
    ]);
    expect(invalid.status).toBe(422);
    expect(
      invalid.body.detail.map((item: { loc: string[]; type: string }) => [item.loc.join("."), item.type]),
    ).toEqual([
      ["body.events.0.type", "string_too_long"],
      ["body.events.0.occurred_at", "datetime_from_date_parsing"],
      ["body.events.0.question_id", "string_too_short"],
      ["body.events.0.elapsed_ms", "less_than_equal"],
      ["body.events.0.extra", "extra_forbidden"],
    ]);
    expect((await participant.events([])).body.detail[0]).toMatchObject({
      loc: ["body", "events"],
      type: "too_short",
    });

    const first = {
      type: "focus_lost",
      occurred_at: "2026-01-05T10:00:00.000Z",
      question_id: "q1",
      elapsed_ms: 1500,
    };
    const second = { type: "paste", occurred_at: "2026-01-05T10:00:02.000Z" };
    const third = {
      type: "resize",
      occurred_at: "2026-01-05T10:00:03.000Z",
      question_id: null,
      elapsed_ms: null,
    };
    expect((await participant.events([first, second])).status).toBe(202);
    expect((await participant.events([third])).status).toBe(202);

    const path = `${tenant.env}/evaluations/${evaluation.id}/behavioral-events`;
    const page1 = await api.get(`${path}?limit=2`, { token: tenant.token });
    expect(page1.status).toBe(200);
    expect(page1.body.items).toEqual([
      { type: "resize", occurred_at: "2026-01-05T10:00:03.000Z", question_id: null, elapsed_ms: null },
      { type: "paste", occurred_at: "2026-01-05T10:00:02.000Z", question_id: null, elapsed_ms: null },
    ]);
    const page2 = await api.get(`${path}?limit=2&cursor=${page1.body.next_cursor}`, { token: tenant.token });
    expect(page2.body).toEqual({ items: [first], next_cursor: null });

    // Staff reads need evaluations:read; another environment does not see the evaluation.
    const analyst = await createKey(api, tenant, ["analytics:read"]);
    expect(expectError(await api.get(path, { apiKey: analyst.secret }), 403, "forbidden").context).toEqual({
      required_scope: "evaluations:read",
    });
    const reader = await createKey(api, tenant, ["evaluations:read"]);
    expect((await api.get(path, { apiKey: reader.secret })).status).toBe(200);
    expectError(
      await api.post(
        `${tenant.env}/evaluations`,
        { subject_id: setup.subjectId, bundle_id: setup.bundleId },
        { apiKey: reader.secret, idempotencyKey: ik() },
      ),
      403,
      "forbidden",
    );
    const other = await api.post(
      `${tenant.app}/environments`,
      { slug: `other-${ik().slice(0, 8)}`, name: "Other" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    const otherEnv = `${tenant.app}/environments/${other.body.id}`;
    expectError(
      await api.get(`${otherEnv}/evaluations/${evaluation.id}/behavioral-events`, { token: tenant.token }),
      404,
      "not_found",
    );
    expectError(
      await api.get(`${otherEnv}/evaluations/${evaluation.id}/behavioral-events`, { apiKey: reader.secret }),
      403,
      "forbidden",
    );
    expectError(
      await api.post(
        `${otherEnv}/evaluations/${evaluation.id}/participant-sessions`,
        {},
        { token: tenant.token, idempotencyKey: ik() },
      ),
      404,
      "not_found",
    );
  });
});

describe("GET ENV/analytics/summary", () => {
  it("applies the privacy floor below 5 started interviews, and computes medians in SQL above it", async () => {
    const own = await createTenant(api);
    const ownSetup = await interviewSetup(api, own);
    const window = () => {
      const starts = new Date(Date.now() - 60 * 60_000).toISOString();
      const ends = new Date(Date.now() + 60 * 60_000).toISOString();
      return `${own.env}/analytics/summary?starts_at=${starts}&ends_at=${ends}`;
    };
    const empty = await api.get(window(), { token: own.token });
    expect(empty.body).toEqual({
      environment_id: own.environmentId,
      starts_at: expect.any(String),
      ends_at: expect.any(String),
      sessions_started: 0,
      sessions_completed: 0,
      completion_rate: 0,
      median_questions: null,
      median_active_ms: null,
      question_metrics: [],
      privacy_floor_applied: true,
      axis_metrics: [],
    });

    // Five interviews: two completed (one with a correction), one ended by the guardrail, two only consented.
    const runs = await Promise.all(Array.from({ length: 5 }, () => consentedInterview(api, ownSetup)));
    const [a, b, c] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    for (const run of [a, b]) {
      await run.participant.answer("q1", { value: 2 });
      await run.participant.answer("q2", { option_id: "a" });
      await run.participant.answer("q3", { value: 4 });
    }
    await a.participant.answer("q1", { value: 3 });
    for (const run of [a, b]) expect((await run.participant.finish()).status).toBe(200);
    await c.participant.answer("q1", { value: -1 });

    const floor = await api.get(window(), { token: own.token });
    expect(floor.body).toMatchObject({
      sessions_started: 5,
      sessions_completed: 2,
      completion_rate: 0.4,
      median_questions: 1,
      median_active_ms: expect.any(Number),
      privacy_floor_applied: false,
    });
    expect(floor.body.question_metrics).toEqual([
      {
        question_id: "q1",
        asked: 5,
        answered: 3,
        answer_rate: 0.6,
        corrections: 1,
        median_answer_ms: expect.any(Number),
      },
      {
        question_id: "q2",
        asked: 2,
        answered: 2,
        answer_rate: 1,
        corrections: 0,
        median_answer_ms: expect.any(Number),
      },
      {
        question_id: "q3",
        asked: 2,
        answered: 2,
        answer_rate: 1,
        corrections: 0,
        median_answer_ms: expect.any(Number),
      },
    ]);

    // Another environment's summary counts none of them.
    const other = await api.get(window().replace(own.env, tenant.env), { token: tenant.token });
    expect(other.body.sessions_started).toBeLessThan(5);
  });

  it("validates the window: both bounds, in order, at most 366 days", async () => {
    const path = `${tenant.env}/analytics/summary`;
    const missing = await api.get(path, { token: tenant.token });
    expect(missing.body.detail.map((item: { loc: string[] }) => item.loc)).toEqual([
      ["query", "starts_at"],
      ["query", "ends_at"],
    ]);
    const long = await api.get(`${path}?starts_at=2025-01-01T00:00:00Z&ends_at=2026-01-03T00:00:00Z`, {
      token: tenant.token,
    });
    expect(long.body.detail[0]).toMatchObject({ loc: ["query", "ends_at"], type: "value_error" });
    const backwards = await api.get(`${path}?starts_at=2026-01-02T00:00:00Z&ends_at=2026-01-01T00:00:00Z`, {
      token: tenant.token,
    });
    expect(backwards.status).toBe(422);
    const ok = await api.get(`${path}?starts_at=2025-01-01T00:00:00Z&ends_at=2026-01-02T00:00:00Z`, {
      token: tenant.token,
    });
    expect(ok.status).toBe(200);
    const viewer = await createKey(api, tenant, ["evaluations:read"]);
    expect(
      expectError(
        await api.get(`${path}?starts_at=2025-01-01T00:00:00Z&ends_at=2025-02-01T00:00:00Z`, {
          apiKey: viewer.secret,
        }),
        403,
        "forbidden",
      ).context,
    ).toEqual({ required_scope: "analytics:read" });
  });
});

describe("logs", () => {
  it("say who the participant was, never their tokens", async () => {
    const { session, participant, started } = await consentedInterview(api, setup);
    await participant.answer("q1", { value: 2 });
    const socket = await openSocket(started.connection.server_url, started.connection.participant_token);
    await socket.close();
    // The socket's line is written when the server sees it close: wait for it.
    const mine = await vi.waitFor(() => {
      const found = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.principal_id === session.session_id);
      expect(found.map((line) => line.route)).toEqual(
        expect.arrayContaining(["/v1/participant/interview/answers", "/v1/participant/realtime"]),
      );
      return found;
    });
    expect(mine.every((line) => line.principal_kind === "participant")).toBe(true);
    const tokens = [session.participant_token, started.connection.participant_token];
    // The signature part is what makes a token: no line carries it.
    const signatures = tokens.map((token) => token.split(".")[2] as string);
    expect(lines.filter((line) => signatures.some((signature) => line.includes(signature)))).toEqual([]);
  });
});
