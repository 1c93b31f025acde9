import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let subjectId: string;
let programId: string;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  const imported = await api.post(
    `${tenant.env}/subjects/batch`,
    { items: [{ external_id: "emp-1", identity_mode: "anonymous", profile: {} }] },
    { token: tenant.token, idempotencyKey: ik() },
  );
  subjectId = imported.body.receipts[0].subject_id;
  programId = (
    await api.post(`${tenant.env}/programs`, { name: "Pulse" }, { token: tenant.token, idempotencyKey: ik() })
  ).body.id;
});

const answer = (overrides: Record<string, unknown> = {}) => ({
  answer: { value: 4 },
  client_answer_id: "ca-1",
  program_id: programId,
  question_id: "q1",
  subject_id: subjectId,
  answered_at: "2026-11-25T10:00:00.000Z",
  ...overrides,
});

describe("POST ENV/continuous-evaluation/answers (#7)", () => {
  it("records an answer (201), returns the first receipt for a retry whatever its key (200, idempotent_replay)", async () => {
    const first = await api.post(`${tenant.env}/continuous-evaluation/answers`, answer(), {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.any(String),
      client_answer_id: "ca-1",
      question_id: "q1",
      idempotent_replay: false,
    });
    const retried = await api.post(`${tenant.env}/continuous-evaluation/answers`, answer(), {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ ...first.body, idempotent_replay: true });
    const events = await stack
      .pool("platform")
      .query("SELECT payload FROM outbox WHERE event_type = 'continuous_answer.recorded'");
    expect(events.rows).toHaveLength(1);
    expect(events.rows[0].payload.data).toMatchObject({
      id: first.body.id,
      subject_id: subjectId,
      question_id: "q1",
    });
  });

  it("links an answer to a webhook delivery of the environment and echoes its id", async () => {
    const endpoint = await api.post(
      `${tenant.env}/webhooks`,
      { url: "http://127.0.0.1:9/unused", event_types: ["webhook.test"] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    const delivery = await api.post(`${tenant.env}/webhooks/${endpoint.body.id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(delivery.status).toBe(200);
    const linked = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      answer({ client_answer_id: "linked", delivery_id: delivery.body.id }),
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(linked.status).toBe(201);
    expect(linked.body.delivery_id).toBe(delivery.body.id);
  });

  it("answers 409 client_answer_conflict for the same client_answer_id with another answer", async () => {
    await api.post(`${tenant.env}/continuous-evaluation/answers`, answer({ client_answer_id: "ca-2" }), {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    const conflict = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      answer({ client_answer_id: "ca-2", answer: { value: 5 } }),
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(conflict, 409, "client_answer_conflict");
  });

  it("answers 404 for an unknown subject or program, and validates the body", async () => {
    const unknown = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
    const noSubject = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      answer({ subject_id: unknown, client_answer_id: "x" }),
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(noSubject, 404, "not_found").context).toEqual({ resource: "subject" });
    const noProgram = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      answer({ program_id: unknown, client_answer_id: "y" }),
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(noProgram, 404, "not_found").context).toEqual({ resource: "program" });
    const noDelivery = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      answer({ delivery_id: unknown, client_answer_id: "w" }),
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(noDelivery, 404, "not_found").context).toMatchObject({
      resource: expect.stringContaining("delivery"),
    });
    const bad = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      { answer: 4, client_answer_id: "", program_id: "nope", question_id: "q1", subject_id: subjectId },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(
      bad.body.detail.map((d: { loc: string[]; type: string }) => `${d.loc.join(".")}:${d.type}`),
    ).toEqual([
      "body.answer:dict_type",
      "body.client_answer_id:string_too_short",
      "body.program_id:uuid_parsing",
    ]);
  });

  it("needs continuous:write and an Idempotency-Key", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    expectError(
      await api.post(`${tenant.env}/continuous-evaluation/answers`, answer(), {
        token: key.secret,
        idempotencyKey: ik(),
      }),
      403,
      "forbidden",
    );
    const writer = await createKey(api, tenant, ["continuous:write"]);
    const noKey = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      answer({ client_answer_id: "z" }),
      { token: writer.secret },
    );
    expect(noKey.body.detail[0].loc).toEqual(["header", "Idempotency-Key"]);
  });
});
