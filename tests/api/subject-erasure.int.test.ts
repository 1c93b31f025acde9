import { randomUUID } from "node:crypto";
import type { Receiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import {
  consentedInterview,
  createSubject,
  interviewSetup,
  openSocket,
  publishedBundle,
} from "./support/interview.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint, deliveriesOf } from "./support/webhooks.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
let bundleId: string;
let programId: string;
/** An endpoint whose receiver refuses every connection: its deliveries wait for a retry. */
let failingEndpointId: string;

const SCHEMAS = ["control", "platform", "interview", "webhooks"] as const;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  receiver = await startCheckedReceiver(api);
  await createEndpoint(api, tenant, { url: `${receiver.url}/all`, event_types: ["*"] });
  failingEndpointId = (
    await createEndpoint(api, tenant, {
      url: "http://127.0.0.1:9/refused",
      event_types: ["continuous_answer.recorded"],
    })
  ).id;
  bundleId = await publishedBundle(api, tenant);
  const program = await api.post(
    `${tenant.env}/programs`,
    { name: "Pulse" },
    { token: tenant.token, idempotencyKey: ik() },
  );
  programId = program.body.id;
});
afterAll(async () => {
  await receiver?.close();
});

/**
 * Where `marker` is found: every table of every plane's schema, every column that can hold text
 * (text, varchar, json, jsonb, and bytea as UTF-8), read directly.
 */
async function tablesHolding(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const schema of SCHEMAS) {
    const db = stack.pool(schema);
    const columns = await db.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
       WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE'
         AND c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'bytea', 'ARRAY')`,
      [schema],
    );
    for (const { table_name: table, column_name: column, data_type: type } of columns.rows) {
      const value =
        type === "bytea"
          ? `position(convert_to($1, 'UTF8') in "${column}")`
          : `strpos("${column}"::text, $1)`;
      const hits = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}"."${table}" WHERE ${value} > 0`,
        [marker],
      );
      if ((hits.rows[0]?.n ?? 0) > 0) found.push(`${schema}.${table}.${column}`);
    }
  }
  return found;
}

/** A subject whose data carries `marker` in every plane: profile, answers, utterances, events. */
async function markedSubject(marker: string) {
  const externalId = `person-${marker}`;
  const imported = await api.post(
    `${tenant.env}/subjects/batch`,
    { items: [{ external_id: externalId, identity_mode: "self_managed", profile: { note: marker } }] },
    { token: tenant.token, idempotencyKey: ik() },
  );
  const subjectId = imported.body.receipts[0].subject_id as string;
  const answered = await api.post(
    `${tenant.env}/continuous-evaluation/answers`,
    {
      answer: { text: `answer ${marker}` },
      client_answer_id: `ca-${randomUUID()}`,
      program_id: programId,
      question_id: "mood",
      subject_id: subjectId,
    },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(answered.status, JSON.stringify(answered.body)).toBe(201);
  const interview = await consentedInterview(api, { tenant, subjectId, bundleId });
  const { server_url: url, participant_token: token } = interview.started.connection;
  const socket = await openSocket(url, token);
  socket.ws.send(
    JSON.stringify({
      type: "utterance",
      modality: "text",
      text: `I said ${marker}`,
      started_at: new Date().toISOString(),
    }),
  );
  expect(await socket.next()).toMatchObject({ type: "entry" });
  const events = await interview.participant.events([
    { type: `blur-${marker}`, occurred_at: new Date().toISOString(), question_id: "q1", elapsed_ms: 10 },
  ]);
  expect(events.status, JSON.stringify(events.body)).toBe(202);
  return { subjectId, externalId, evaluationId: interview.evaluation.id, socket };
}

async function erase(subjectId: string, as: Pick<Tenant, "env" | "token"> = tenant) {
  return api.call("DELETE", `${as.env}/subjects/${subjectId}`, undefined, {
    token: as.token,
    idempotencyKey: ik(),
  });
}

async function completedErasure(subjectId: string) {
  return vi.waitFor(
    async () => {
      const state = await api.get(`${tenant.env}/subjects/${subjectId}/erasure`, { token: tenant.token });
      expect(state.status, JSON.stringify(state.body)).toBe(200);
      expect(state.body.status, JSON.stringify(state.body)).toBe("completed");
      return state.body;
    },
    { timeout: 20_000, interval: 100 },
  );
}

describe("GET ENV/subjects and GET ENV/subjects/{subject_id}", () => {
  it("lists newest first, filters by external_id, pages with a cursor, under subjects:read", async () => {
    const own = await createTenant(api);
    const ids: string[] = [];
    for (const name of ["a", "b", "c"]) ids.push(await createSubject(api, own, `list-${name}`));
    const first = await api.get(`${own.env}/subjects?limit=2`, { token: own.token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((item: { id: string }) => item.id)).toEqual([ids[2], ids[1]]);
    const second = await api.get(`${own.env}/subjects?limit=2&cursor=${first.body.next_cursor}`, {
      token: own.token,
    });
    expect(second.body.items.map((item: { id: string }) => item.id)).toEqual([ids[0]]);
    expect(second.body.next_cursor).toBeNull();
    const filtered = await api.get(`${own.env}/subjects?external_id=list-b`, { token: own.token });
    expect(filtered.body.items).toEqual([
      {
        id: ids[1],
        environment_id: own.environmentId,
        external_id: "list-b",
        identity_mode: "enterprise_managed",
        profile: {},
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);

    const reader = await createKey(api, own, ["subjects:read"]);
    expect((await api.get(`${own.env}/subjects/${ids[0]}`, { token: reader.secret })).status).toBe(200);
    const writer = await createKey(api, own, ["subjects:write"]);
    expect((await api.get(`${own.env}/subjects`, { token: writer.secret })).status).toBe(200);
    const other = await createKey(api, own, ["bundles:read"]);
    expectError(await api.get(`${own.env}/subjects`, { token: other.secret }), 403, "forbidden");
    // Another environment's subject, and an unknown one: 404.
    expectError(await api.get(`${tenant.env}/subjects/${ids[0]}`, { token: tenant.token }), 404, "not_found");
    expectError(await api.get(`${own.env}/subjects/${randomUUID()}`, { token: own.token }), 404, "not_found");
  });
});

describe("DELETE ENV/subjects/{subject_id}", () => {
  it("erases the subject from every plane, ends its interview and closes its sockets, keeps the audit", async () => {
    const marker = `mk${randomUUID().replaceAll("-", "")}`;
    const { subjectId, externalId, evaluationId, socket } = await markedSubject(marker);
    await vi.waitFor(async () => {
      const holding = await tablesHolding(marker);
      expect(holding).toEqual(
        expect.arrayContaining([
          "control.subjects.profile",
          "platform.continuous_answers.answer",
          "interview.interview_entries.payload",
          "interview.behavioral_events.type",
          "webhooks.webhook_events.body",
        ]),
      );
    });
    // The export holds every marker: profile, answer, utterance, behavioral event.
    const exported = await api.get(`${tenant.env}/subjects/${subjectId}/export`, { token: tenant.token });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.headers.get("content-type")).toMatch(/^application\/json/);
    const document = exported.body;
    expect(document.subject).toMatchObject({
      id: subjectId,
      external_id: externalId,
      profile: { note: marker },
    });
    expect(document.platform.continuous_answers).toEqual([
      expect.objectContaining({ answer: { text: `answer ${marker}` }, program_id: programId }),
    ]);
    expect(document.interview.evaluations).toEqual([
      expect.objectContaining({ id: evaluationId, status: "active" }),
    ]);
    expect(JSON.stringify(document.interview.entries)).toContain(`I said ${marker}`);
    expect(document.interview.behavioral_events).toEqual([
      expect.objectContaining({ type: `blur-${marker}` }),
    ]);
    expect(document.webhooks.webhook_deliveries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event_type: "continuous_answer.recorded", status: expect.any(String) }),
      ]),
    );
    expect(JSON.stringify(document.webhooks)).not.toContain(marker);
    for (const marked of [`"note":"${marker}"`, `answer ${marker}`, `I said ${marker}`, `blur-${marker}`]) {
      expect(exported.text).toContain(marked);
    }
    const closed = new Promise<number>((resolve) => socket.ws.once("close", (code) => resolve(code)));

    const erased = await erase(subjectId);
    expect(erased.status, JSON.stringify(erased.body)).toBe(202);
    expect(erased.body).toEqual({
      subject_id: subjectId,
      erasure: { status: "pending", requested_at: expect.any(String) },
    });
    expect(await socket.next()).toMatchObject({ type: "error", code: "subject_erased" });
    expect(await closed).toBe(4401);

    const state = await completedErasure(subjectId);
    expect(state).toEqual({
      subject_id: subjectId,
      status: "completed",
      requested_at: erased.body.erasure.requested_at,
      completed_at: expect.any(String),
      planes: { control: "completed", interview: "completed", platform: "completed", webhooks: "completed" },
    });
    expect(await tablesHolding(marker)).toEqual([]);
    // The answer's delivery that was still waiting is stopped, and announced as a dead letter.
    const stopped = await deliveriesOf(api, tenant, failingEndpointId);
    expect(stopped).toEqual([
      expect.objectContaining({
        event_type: "continuous_answer.recorded",
        status: "dead_letter",
        last_error: "subject erased",
      }),
    ]);
    // Each plane that could be sent new data about the subject remembers that it erased it.
    for (const schema of ["interview", "platform"] as const) {
      const remembered = await stack
        .pool(schema)
        .query("SELECT 1 FROM erased_subjects WHERE subject_id = $1", [subjectId]);
      expect(remembered.rowCount, schema).toBe(1);
    }

    // The interview was ended, not left going on.
    const interview = await api.get(`${tenant.env}/evaluations/${evaluationId}/interview`, {
      token: tenant.token,
    });
    expect(interview.body).toMatchObject({
      status: "ended_incomplete",
      ended_reason: "subject_erased",
      entries: [],
    });

    // Reads answer 404 subject_erased; a second DELETE answers the erasure as it stands.
    const read = await api.get(`${tenant.env}/subjects/${subjectId}`, { token: tenant.token });
    expectError(read, 404, "subject_erased");
    expect(read.body.detail.context).toEqual({
      resource: "subject",
      subject_id: subjectId,
      erased_at: erased.body.erasure.requested_at,
    });
    const again = await erase(subjectId);
    expect(again.status).toBe(202);
    expect(again.body).toEqual({
      subject_id: subjectId,
      erasure: { status: "completed", requested_at: erased.body.erasure.requested_at },
    });
    expectError(
      await api.get(`${tenant.env}/subjects/${subjectId}/export`, { token: tenant.token }),
      404,
      "subject_erased",
    );
    expectError(
      await api.post(
        `${tenant.env}/evaluations`,
        { subject_id: subjectId, bundle_id: bundleId },
        { token: tenant.token, idempotencyKey: ik() },
      ),
      404,
      "subject_erased",
    );

    // The same external id imports as a new subject.
    const reimported = await createSubject(api, tenant, externalId);
    expect(reimported).not.toBe(subjectId);

    // The audit trail keeps the request, with no personal data.
    const audit = await api.get(`${tenant.org}/audit-events?action=subject.erasure_requested`, {
      token: tenant.token,
    });
    expect(audit.body.items).toEqual([
      expect.objectContaining({ resource_type: "subject", resource_id: subjectId, metadata: {} }),
    ]);

    // One `subject.erasure_requested` and one `subject.erased`, ids and times only.
    await vi.waitFor(() => {
      const erasedEvents = receiver.requests
        .map((request) => JSON.parse(request.body))
        .filter((event) => event.type === "subject.erased" && event.data.subject_id === subjectId);
      expect(erasedEvents).toHaveLength(1);
      expect(erasedEvents[0].data).toEqual({
        subject_id: subjectId,
        requested_at: erased.body.erasure.requested_at,
        completed_at: state.completed_at,
      });
    });
  });

  it("404s another environment's subject and an unknown id, needs subjects:write and an Idempotency-Key", async () => {
    const other = await createTenant(api);
    const theirs = await createSubject(api, other);
    expectError(await erase(theirs), 404, "not_found");
    expectError(await erase(randomUUID()), 404, "not_found");
    expectError(
      await api.get(`${tenant.env}/subjects/${theirs}/erasure`, { token: tenant.token }),
      404,
      "not_found",
    );
    expectError(
      await api.get(`${tenant.env}/subjects/${theirs}/export`, { token: tenant.token }),
      404,
      "not_found",
    );
    expectError(
      await api.get(`${tenant.env}/subjects/${randomUUID()}/export`, { token: tenant.token }),
      404,
      "not_found",
    );
    const reader = await createKey(api, other, ["subjects:read"]);
    expectError(await erase(theirs, { env: other.env, token: reader.secret }), 403, "forbidden");
    const missingKey = await api.call("DELETE", `${other.env}/subjects/${theirs}`, undefined, {
      token: other.token,
    });
    expect(missingKey.status).toBe(422);
    expect(await api.get(`${other.env}/subjects/${theirs}`, { token: other.token })).toMatchObject({
      status: 200,
    });
  });

  it("refuses, in the interview and platform planes, new data about a subject they erased, whatever control said", async () => {
    // As when an evaluation or an answer was checked with control just before the tombstone,
    // and reaches its plane just after the plane erased the subject.
    const subjectId = await createSubject(api, tenant);
    for (const schema of ["interview", "platform"] as const) {
      await stack
        .pool(schema)
        .query("INSERT INTO erased_subjects (subject_id, environment_id) VALUES ($1, $2)", [
          subjectId,
          tenant.environmentId,
        ]);
    }
    const evaluation = await api.post(
      `${tenant.env}/evaluations`,
      { subject_id: subjectId, bundle_id: bundleId },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(evaluation, 404, "subject_erased");
    const answer = await api.post(
      `${tenant.env}/continuous-evaluation/answers`,
      {
        answer: { value: 1 },
        client_answer_id: `ca-${randomUUID()}`,
        program_id: programId,
        question_id: "mood",
        subject_id: subjectId,
      },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(answer, 404, "subject_erased");
  });

  it("exports, then erases, a subject with 10,000 interview entries within seconds", async () => {
    const setup = await interviewSetup(api, tenant);
    const { evaluation } = await consentedInterview(api, setup);
    const db = stack.pool("interview");
    const interviewId = (
      await db.query<{ id: string }>("SELECT id FROM interviews WHERE evaluation_id = $1", [evaluation.id])
    ).rows[0]?.id;
    await db.query(
      `INSERT INTO interview_entries (id, interview_id, seq, kind, actor, occurred_at, received_at, payload)
       SELECT gen_random_uuid(), $1, 1000 + n, 'utterance', 'participant', now(), now(),
              jsonb_build_object('text', 'filler utterance ' || n, 'speaker', 'participant', 'modality', 'text')
       FROM generate_series(1, 10000) AS n`,
      [interviewId],
    );
    const exportStarted = performance.now();
    const exported = await api.get(`${tenant.env}/subjects/${setup.subjectId}/export`, {
      token: tenant.token,
    });
    expect(exported.status).toBe(200);
    expect(exported.body.interview.entries.length).toBeGreaterThanOrEqual(10_000);
    console.info(
      `export of a subject with 10,000 entries: ${Math.round(performance.now() - exportStarted)} ms, ${exported.text.length} bytes`,
    );
    const started = performance.now();
    expect((await erase(setup.subjectId)).status).toBe(202);
    await completedErasure(setup.subjectId);
    const elapsedMs = performance.now() - started;
    console.info(`erasure of a subject with 10,000 entries: ${Math.round(elapsedMs)} ms`);
    expect(elapsedMs).toBeLessThan(10_000);
    const left = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM interview_entries WHERE interview_id = $1",
      [interviewId],
    );
    expect(left.rows[0]?.n).toBe(0);
  });
});
