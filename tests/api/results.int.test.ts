import type { Receiver } from "@evalp/testing";
import { sampleContents } from "@evalp/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { consentedInterview } from "./support/interview.js";
import { createBundle, moveBundle } from "./support/platform.js";
import { useStack } from "./support/stack.js";
import { createEndpoint } from "./support/webhooks.js";

const context = useStack({ WEBHOOK_ALLOW_PRIVATE: "true" });
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
let endpoint: { id: string; secret: string };
let subject: { id: string; external_id: string; profile: Record<string, unknown> };
let bundleId: string;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The sample bundle with a scorecard that reads all three roots: the answers, the context (its
 * defaults and the subject merged in) and the signals; one axis is a type error (null score).
 */
function verdictContents(factor = 10) {
  const contents = sampleContents();
  const v = (path: string) => ({ op: "var", path });
  const band = (id: string, min: number, max: number) => ({ id, label: id.toUpperCase(), min, max });
  contents.scorecard.axes = [
    {
      id: "experience",
      label: "Experience",
      expr: { op: "calc", fn: "mul", args: [v("answers.q1.value"), { op: "lit", value: factor }] },
      bands: [band("junior", 0, 30), band("senior", 30, 1000)],
    },
    {
      id: "skill",
      label: "Skill",
      expr: v("answers.q3.value"),
      bands: [band("low", 0, 3), band("high", 3, 6)],
    },
    {
      id: "diligence",
      label: "Diligence",
      expr: { op: "calc", fn: "add", args: [v("signals.attempts"), v("signals.corrections")] },
      bands: [band("some", 0, 100)],
    },
    {
      id: "seniority",
      label: "Seniority",
      expr: {
        op: "if",
        args: [
          { op: "cmp", fn: "eq", args: [v("context.region"), { op: "lit", value: "eu" }] },
          v("context.subject.profile.years"),
          { op: "lit", value: -1 },
        ],
      },
      bands: [],
    },
    {
      id: "broken",
      label: "Broken",
      expr: { op: "calc", fn: "add", args: [v("answers.q2.option_id"), { op: "lit", value: 1 }] },
      bands: [],
    },
  ] as never;
  contents.report_template.sections = [
    { id: "main", title: "Main", axes: ["experience", "skill", "diligence"] },
    { id: "more", title: "More", axes: ["seniority", "broken"] },
  ] as never;
  return contents;
}

async function publishedVerdictBundle(factor = 10, name = "Verdict") {
  const { bundle } = await createBundle(api, tenant, verdictContents(factor), name);
  for (const status of ["validated", "published"]) {
    const moved = await moveBundle(api, tenant, bundle.id, status);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  }
  return bundle.id as string;
}

beforeAll(async () => {
  ({ api } = context);
  tenant = await createTenant(api);
  receiver = await startCheckedReceiver(api);
  endpoint = await createEndpoint(api, tenant, {
    url: `${receiver.url}/scored`,
    event_types: ["evaluation.scored"],
  });
  const externalId = `emp-${ik()}`;
  const profile = { years: 7, team: "data" };
  const imported = await api.post(
    `${tenant.env}/subjects/batch`,
    { items: [{ external_id: externalId, identity_mode: "enterprise_managed", profile }] },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  subject = { id: imported.body.receipts[0].subject_id, external_id: externalId, profile };
  bundleId = await publishedVerdictBundle();
});
afterAll(async () => {
  await receiver?.close();
});

const setup = () => ({ tenant, subjectId: subject.id, bundleId });
/** The evaluation the first test completes, with its result: the rescores start from it. */
let completed: { evaluationId: string; result: Record<string, any> };
const resultOf = (evaluationId: string) =>
  api.get(`${tenant.env}/evaluations/${evaluationId}/result`, { token: tenant.token });

/** Polls until the evaluation's result is stored, and returns it. */
async function scoredResult(evaluationId: string) {
  return vi.waitFor(
    async () => {
      const got = await resultOf(evaluationId);
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      return got.body as Record<string, any>;
    },
    { timeout: 15_000, interval: 50 },
  );
}

/** The signed `evaluation.scored` deliveries of one evaluation, verified with the endpoint's secret. */
function scoredEvents(evaluationId: string) {
  return receiver
    .at("/scored")
    .map(
      (request) => new Webhook(endpoint.secret).verify(request.body, request.headers) as Record<string, any>,
    )
    .filter((event) => event.data.evaluation_id === evaluationId);
}

describe("scoring at the end (docs/results.md)", () => {
  it("scores an interview completed through the participant door, as preview scores the same inputs", async () => {
    const { evaluation, participant } = await consentedInterview(api, setup());
    const early = await resultOf(evaluation.id);
    expect(expectError(early, 409, "result_not_ready").context).toEqual({ status: "active" });

    expect((await participant.answer("q1", { value: 2 })).status).toBe(200);
    expect((await participant.answer("q2", { option_id: "a" })).status).toBe(200);
    expect((await participant.answer("q3", { value: 4 })).status).toBe(200);
    expect((await participant.answer("q1", { value: 4 })).status).toBe(200);
    const finished = await participant.finish();
    expect(finished.status, JSON.stringify(finished.body)).toBe(200);

    const result = await scoredResult(evaluation.id);
    expect(Object.keys(result)).toEqual([
      "evaluation_id",
      "subject_id",
      "bundle_id",
      "fingerprint",
      "outcome",
      "scored_at",
      "report",
      "trace",
    ]);
    const bundle = await api.get(`${tenant.app}/bundles/${bundleId}`, { token: tenant.token });
    expect(result).toMatchObject({
      evaluation_id: evaluation.id,
      subject_id: subject.id,
      bundle_id: bundleId,
      fingerprint: bundle.body.fingerprint,
      outcome: "completed",
      scored_at: expect.stringMatching(ISO),
    });

    // The same answers (corrected), context and signals, previewed: the same report and trace.
    const view = await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, {
      token: tenant.token,
    });
    const lag = Date.parse(result.scored_at) - Date.parse(view.body.completed_at);
    expect(lag).toBeGreaterThanOrEqual(0);
    console.info(`scored ${lag} ms after the interview ended`);
    const { provider_errors: _p, usage: _u, ...signals } = view.body.metrics;
    expect(signals).toMatchObject({ attempts: 4, corrections: 1 });
    const preview = await api.post(
      `${tenant.app}/bundles/${bundleId}/preview`,
      {
        answers: { q1: { value: 4 }, q2: { option_id: "a" }, q3: { value: 4 } },
        context: { subject: { external_id: subject.external_id, profile: subject.profile } },
        respondent_id: subject.id,
        signals,
      },
      { token: tenant.token },
    );
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(result.report).toEqual(preview.body.report);
    expect(result.trace).toEqual(preview.body.trace);
    expect(result.report).toMatchObject({
      respondent_id: subject.id,
      title: "Candidate report",
      axes: [
        { axis: "experience", score: 40, band_id: "senior", band_label: "SENIOR" },
        { axis: "skill", score: 4, band_id: "high" },
        { axis: "diligence", score: 5, band_id: "some" },
        { axis: "seniority", score: 7, band_id: null },
        { axis: "broken", score: null, band_id: null },
      ],
      sections: [
        {
          id: "main",
          title: "Main",
          axes: [{ axis: "experience" }, { axis: "skill" }, { axis: "diligence" }],
        },
        { id: "more", title: "More", axes: [{ axis: "seniority" }, { axis: "broken" }] },
      ],
    });
    expect(result.trace.axes.broken).toContainEqual(expect.objectContaining({ error: "type_error" }));

    // One `evaluation.scored` delivery, signed, with the report and without the trace.
    const [event] = await vi.waitFor(
      () => {
        const events = scoredEvents(evaluation.id);
        expect(events).toHaveLength(1);
        return events;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(event?.type).toBe("evaluation.scored");
    expect(event?.environment_id).toBe(tenant.environmentId);
    expect(event?.data).toEqual({
      evaluation_id: evaluation.id,
      subject_id: subject.id,
      bundle_id: bundleId,
      fingerprint: result.fingerprint,
      outcome: "completed",
      report: result.report,
    });
    // Stored once: the result does not change when read again.
    expect(await scoredResult(evaluation.id)).toEqual(result);
    completed = { evaluationId: evaluation.id, result };
  });

  it("scores an interview a guardrail ended as `ended_incomplete`", async () => {
    const { evaluation, participant } = await consentedInterview(api, setup());
    const ended = await participant.answer("q1", { value: -1 });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const result = await scoredResult(evaluation.id);
    expect(result.outcome).toBe("ended_incomplete");
    expect(result.report.axes[0]).toEqual({
      axis: "experience",
      label: "Experience",
      score: -10,
      band_id: null,
      band_label: null,
    });
    expect(result.report.axes[1]).toMatchObject({ axis: "skill", score: null });
    await vi.waitFor(() => expect(scoredEvents(evaluation.id)).toHaveLength(1), { timeout: 10_000 });
    expect(scoredEvents(evaluation.id)[0]?.data.outcome).toBe("ended_incomplete");
  });

  it("needs evaluations:read to read and list, evaluations:write to rescore", async () => {
    const evaluationPath = `${tenant.env}/evaluations/${completed.evaluationId}`;
    const orgOnly = await createKey(api, tenant, ["org:read"], "org-only");
    for (const path of [
      `${evaluationPath}/result`,
      `${evaluationPath}/results`,
      `${tenant.env}/evaluations`,
    ]) {
      const denied = await api.get(path, { apiKey: orgOnly.secret });
      expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "evaluations:read" });
    }
    const reader = await createKey(api, tenant, ["evaluations:read"], "reader");
    expect((await api.get(`${evaluationPath}/result`, { apiKey: reader.secret })).status).toBe(200);
    const rescore = await api.post(
      `${evaluationPath}/rescore`,
      { bundle_id: bundleId },
      { apiKey: reader.secret, idempotencyKey: ik() },
    );
    expect(expectError(rescore, 403, "forbidden").context).toEqual({ required_scope: "evaluations:write" });
    expectError(await api.get(`${evaluationPath}/result`), 401, "unauthenticated");
  });

  it("answers 409 `result_not_ready` before the start, and 404 for an unknown or foreign evaluation", async () => {
    const created = await api.post(
      `${tenant.env}/evaluations`,
      { subject_id: subject.id, bundle_id: bundleId },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(await resultOf(created.body.id), 409, "result_not_ready").context).toEqual({
      status: "pending",
    });
    expectError(await resultOf(ik()), 404, "not_found");
    const other = await createTenant(api);
    const foreign = await api.get(`${other.env}/evaluations/${created.body.id}/result`, {
      token: other.token,
    });
    expectError(foreign, 404, "not_found");
    const results = await api.get(`${tenant.env}/evaluations/${created.body.id}/results`, {
      token: tenant.token,
    });
    expect(results.status).toBe(200);
    expect(results.body).toEqual({ items: [] });
  });
});

/** An interview of a fresh evaluation answered (q1 = `years`) and finished; its evaluation. */
async function completeInterview(forTenant: Tenant, subjectId: string, bundle: string, years: number) {
  const { evaluation, participant } = await consentedInterview(api, {
    tenant: forTenant,
    subjectId,
    bundleId: bundle,
  });
  for (const [question, answer] of [
    ["q1", { value: years }],
    ["q2", { option_id: "a" }],
    ["q3", { value: 2 }],
  ] as const) {
    const answered = await participant.answer(question, answer);
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
  }
  expect((await participant.finish()).status).toBe(200);
  return evaluation;
}

describe("rescoring (docs/results.md#rescoring)", () => {
  it("scores the same inputs against a newer published bundle, adds a result and an event; a draft is refused", async () => {
    const { evaluationId, result: first } = completed;
    const path = `${tenant.env}/evaluations/${evaluationId}/rescore`;
    const newer = await publishedVerdictBundle(20, "Verdict v2");
    const key = ik();
    const rescored = await api.post(path, { bundle_id: newer }, { token: tenant.token, idempotencyKey: key });
    expect(rescored.status, JSON.stringify(rescored.body)).toBe(201);
    const bundle = await api.get(`${tenant.app}/bundles/${newer}`, { token: tenant.token });
    expect(rescored.body).toMatchObject({
      evaluation_id: evaluationId,
      subject_id: subject.id,
      bundle_id: newer,
      fingerprint: bundle.body.fingerprint,
      outcome: "completed",
      scored_at: expect.stringMatching(ISO),
    });
    // Same answers (q1 = 4), context and signals; the newer bundle doubles experience.
    expect(rescored.body.report.axes.map((axis: { score: number | null }) => axis.score)).toEqual([
      80,
      4,
      5,
      7,
      null,
    ]);
    expect(rescored.body.report).toEqual({
      ...first.report,
      bundle_id: newer,
      fingerprint: bundle.body.fingerprint,
      axes: rescored.body.report.axes,
      sections: rescored.body.report.sections,
    });

    // The same key again: the same answer, nothing scored twice.
    const replay = await api.post(path, { bundle_id: newer }, { token: tenant.token, idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(rescored.body);

    expect((await resultOf(evaluationId)).body).toEqual(rescored.body);
    const listed = await api.get(`${tenant.env}/evaluations/${evaluationId}/results`, {
      token: tenant.token,
    });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ items: [first, rescored.body] });
    await vi.waitFor(() => expect(scoredEvents(evaluationId)).toHaveLength(2), { timeout: 10_000 });
    expect(scoredEvents(evaluationId).map((event) => event.data.bundle_id)).toEqual([bundleId, newer]);
    expect(scoredEvents(evaluationId)[1]?.data.report).toEqual(rescored.body.report);

    // A draft bundle, an unknown one, and no Idempotency-Key: refused, nothing stored.
    const { bundle: draft } = await createBundle(api, tenant, verdictContents(30), "Draft");
    const refused = await api.post(
      path,
      { bundle_id: draft.id },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(refused, 409, "bundle_not_published").context).toMatchObject({ status: "draft" });
    expectError(
      await api.post(path, { bundle_id: ik() }, { token: tenant.token, idempotencyKey: ik() }),
      404,
      "not_found",
    );
    const unkeyed = await api.post(path, { bundle_id: newer }, { token: tenant.token });
    expect(unkeyed.status).toBe(422);
    expect(unkeyed.body.detail[0].loc).toEqual(["header", "Idempotency-Key"]);
    const after = await api.get(`${tenant.env}/evaluations/${evaluationId}/results`, { token: tenant.token });
    expect(after.body.items).toHaveLength(2);

    // Before the interview ends there is nothing to rescore.
    const pending = await api.post(
      `${tenant.env}/evaluations`,
      { subject_id: subject.id, bundle_id: bundleId },
      { token: tenant.token, idempotencyKey: ik() },
    );
    const early = await api.post(
      `${tenant.env}/evaluations/${pending.body.id}/rescore`,
      { bundle_id: newer },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(early, 409, "result_not_ready").context).toEqual({ status: "pending" });
  });
});

describe("listing evaluations (docs/results.md#listing-evaluations)", () => {
  it("pages newest first, filters, carries `scored_at`, and refuses bad filters with 422", async () => {
    const owner = await createTenant(api);
    const [first, second] = await Promise.all([
      api.post(
        `${owner.env}/subjects/batch`,
        {
          items: [
            { external_id: "a", identity_mode: "anonymous", profile: {} },
            { external_id: "b", identity_mode: "anonymous", profile: {} },
          ],
        },
        { token: owner.token, idempotencyKey: ik() },
      ),
      api.post(`${owner.env}/programs`, { name: "Graduates" }, { token: owner.token, idempotencyKey: ik() }),
    ]);
    const [a, b] = first.body.receipts.map((receipt: { subject_id: string }) => receipt.subject_id);
    const programId = second.body.id as string;
    const { bundle } = await createBundle(api, owner, verdictContents());
    for (const status of ["validated", "published"]) await moveBundle(api, owner, bundle.id, status);
    const done = await completeInterview(owner, a, bundle.id, 3);
    const create = async (body: Record<string, unknown>) => {
      const created = await api.post(
        `${owner.env}/evaluations`,
        { bundle_id: bundle.id, ...body },
        {
          token: owner.token,
          idempotencyKey: ik(),
        },
      );
      expect(created.status).toBe(201);
      return created.body as { id: string; created_at: string };
    };
    const withProgram = await create({ subject_id: b, program_id: programId });
    const latest = await create({ subject_id: a });
    await scoredResult2(owner, done.id);

    const list = (query = "") => api.get(`${owner.env}/evaluations${query}`, { token: owner.token });
    const all = await list();
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.items.map((item: { id: string }) => item.id)).toEqual([
      latest.id,
      withProgram.id,
      done.id,
    ]);
    expect(all.body.next_cursor).toBeNull();
    for (const item of all.body.items) {
      const one = await api.get(`${owner.env}/evaluations/${item.id}`, { token: owner.token });
      const { scored_at, ...rest } = item;
      expect(rest).toEqual(one.body);
      if (item.id === done.id) {
        expect(scored_at).toBe(
          (await api.get(`${owner.env}/evaluations/${done.id}/result`, { token: owner.token })).body
            .scored_at,
        );
      } else expect(scored_at).toBeNull();
    }

    const page = await list("?limit=2");
    expect(page.body.items.map((item: { id: string }) => item.id)).toEqual([latest.id, withProgram.id]);
    const rest = await list(`?limit=2&cursor=${page.body.next_cursor}`);
    expect(rest.body).toEqual({ items: [all.body.items[2]], next_cursor: null });

    const ids = async (query: string) => {
      const got = await list(query);
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      return got.body.items.map((item: { id: string }) => item.id);
    };
    expect(await ids("?status=completed")).toEqual([done.id]);
    expect(await ids("?status=pending")).toEqual([latest.id, withProgram.id]);
    expect(await ids(`?subject_id=${a}`)).toEqual([latest.id, done.id]);
    expect(await ids(`?program_id=${programId}`)).toEqual([withProgram.id]);
    expect(await ids(`?bundle_id=${bundle.id}&subject_id=${b}`)).toEqual([withProgram.id]);
    expect(await ids(`?bundle_id=${bundleId}`)).toEqual([]);
    expect(await ids(`?created_after=${encodeURIComponent(withProgram.created_at)}`)).not.toContain(done.id);
    expect(await ids(`?created_before=${encodeURIComponent(withProgram.created_at)}`)).toEqual([done.id]);
    expect(
      await ids("?created_after=2000-01-01T00:00:00.000Z&created_before=2000-01-02T00:00:00.000Z"),
    ).toEqual([]);

    const bad = await list("?status=finished&subject_id=nope&created_after=yesterday");
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((item: { loc: string[] }) => item.loc)).toEqual([
      ["query", "status"],
      ["query", "subject_id"],
      ["query", "created_after"],
    ]);
    expect(bad.body.detail[0]).toMatchObject({ type: "enum", input: "finished" });
    expect(bad.body.detail[1]).toMatchObject({ type: "uuid_parsing", input: "nope" });
    const badCursor = await list("?cursor=not-a-cursor");
    expect(badCursor.status).toBe(422);
    expect(badCursor.body.detail[0].loc).toEqual(["query", "cursor"]);
    // Another environment's evaluations are not listed.
    expect(
      (await api.get(`${tenant.env}/evaluations?subject_id=${a}`, { token: tenant.token })).body.items,
    ).toEqual([]);
  });
});

/** Polls until the tenant's evaluation has its result. */
async function scoredResult2(forTenant: Tenant, evaluationId: string) {
  return vi.waitFor(
    async () => {
      const got = await api.get(`${forTenant.env}/evaluations/${evaluationId}/result`, {
        token: forTenant.token,
      });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      return got.body as Record<string, any>;
    },
    { timeout: 15_000, interval: 50 },
  );
}

describe("scores in analytics (docs/results.md#scores-in-analytics)", () => {
  it("sums each axis of the window's results over the privacy floor, and nothing under it", async () => {
    const owner = await createTenant(api);
    const imported = await api.post(
      `${owner.env}/subjects/batch`,
      { items: [{ external_id: "x", identity_mode: "anonymous", profile: { years: 2 } }] },
      { token: owner.token, idempotencyKey: ik() },
    );
    const subjectId = imported.body.receipts[0].subject_id as string;
    const { bundle } = await createBundle(api, owner, verdictContents());
    for (const status of ["validated", "published"]) await moveBundle(api, owner, bundle.id, status);
    const window = `starts_at=${new Date(Date.now() - 3_600_000).toISOString()}&ends_at=${new Date(Date.now() + 3_600_000).toISOString()}`;
    const summary = () => api.get(`${owner.env}/analytics/summary?${window}`, { token: owner.token });

    const firstOne = await completeInterview(owner, subjectId, bundle.id, 1);
    await scoredResult2(owner, firstOne.id);
    const under = await summary();
    expect(under.status, JSON.stringify(under.body)).toBe(200);
    expect(under.body).toMatchObject({ sessions_started: 1, privacy_floor_applied: true, axis_metrics: [] });

    const rest = [];
    for (const years of [2, 3, 4, 5]) rest.push(await completeInterview(owner, subjectId, bundle.id, years));
    for (const evaluation of rest) await scoredResult2(owner, evaluation.id);
    const over = await summary();
    expect(over.body).toMatchObject({ sessions_started: 5, privacy_floor_applied: false });
    expect(over.body.axis_metrics).toEqual([
      { axis: "broken", label: "Broken", scored: 0, mean: null, median: null, bands: [] },
      {
        axis: "diligence",
        label: "Diligence",
        scored: 5,
        mean: 3,
        median: 3,
        bands: [{ band_id: "some", band_label: "SOME", count: 5 }],
      },
      {
        axis: "experience",
        label: "Experience",
        scored: 5,
        mean: 30,
        median: 30,
        bands: [
          { band_id: "junior", band_label: "JUNIOR", count: 2 },
          { band_id: "senior", band_label: "SENIOR", count: 3 },
        ],
      },
      { axis: "seniority", label: "Seniority", scored: 5, mean: 2, median: 2, bands: [] },
      {
        axis: "skill",
        label: "Skill",
        scored: 5,
        mean: 2,
        median: 2,
        bands: [{ band_id: "low", band_label: "LOW", count: 5 }],
      },
    ]);
  });
});
