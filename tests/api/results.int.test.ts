import type { Receiver } from "@evalp/testing";
import { sampleContents } from "@evalp/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
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
