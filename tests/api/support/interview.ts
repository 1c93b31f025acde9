import { expect } from "vitest";
import WebSocket from "ws";
import type { ApiClient } from "./client.js";
import { ik, type Tenant } from "./fixtures.js";
import { createBundle, moveBundle } from "./platform.js";
import { checkFrame } from "./realtime-catalog.js";

/** A published bundle of the sample contents (three questions, guardrail, skip rule). */
export async function publishedBundle(api: ApiClient, tenant: Tenant): Promise<string> {
  const { bundle } = await createBundle(api, tenant);
  for (const status of ["validated", "published"]) {
    const moved = await moveBundle(api, tenant, bundle.id, status);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  }
  return bundle.id as string;
}

/** A subject of the tenant's environment. */
export async function createSubject(
  api: ApiClient,
  tenant: Tenant,
  externalId = `emp-${ik()}`,
): Promise<string> {
  const imported = await api.post(
    `${tenant.env}/subjects/batch`,
    { items: [{ external_id: externalId, identity_mode: "enterprise_managed", profile: {} }] },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  return imported.body.receipts[0].subject_id as string;
}

/** Everything an interview needs in one environment: a subject and a published bundle. */
export type InterviewSetup = { tenant: Tenant; subjectId: string; bundleId: string };

export async function interviewSetup(api: ApiClient, tenant: Tenant): Promise<InterviewSetup> {
  const [subjectId, bundleId] = await Promise.all([createSubject(api, tenant), publishedBundle(api, tenant)]);
  return { tenant, subjectId, bundleId };
}

export async function createEvaluation(api: ApiClient, setup: InterviewSetup) {
  const created = await api.post(
    `${setup.tenant.env}/evaluations`,
    { subject_id: setup.subjectId, bundle_id: setup.bundleId },
    { token: setup.tenant.token, idempotencyKey: ik() },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { id: string; status: string };
}

export async function createSession(
  api: ApiClient,
  tenant: Tenant,
  evaluationId: string,
  ttlSeconds?: number,
) {
  const created = await api.post(
    `${tenant.env}/evaluations/${evaluationId}/participant-sessions`,
    ttlSeconds === undefined ? {} : { ttl_seconds: ttlSeconds },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { session_id: string; participant_token: string; expires_at: string; url: string };
}

/** A participant's calls, with their token. */
export function participantClient(api: ApiClient, token: string) {
  const path = "/v1/participant/interview";
  return {
    start: () => api.post(`${path}/start`, undefined, { token }),
    consent: () => api.post(`${path}/consent`, { consented: true }, { token }),
    answer: (questionId: string, answer: Record<string, unknown>) =>
      api.post(`${path}/answers`, { question_id: questionId, answer }, { token }),
    finish: () => api.post(`${path}/finish`, undefined, { token }),
    events: (events: unknown[]) => api.post(`${path}/events`, { events }, { token }),
    transcript: (query = "") => api.get(`${path}/transcript${query}`, { token }),
  };
}

/** An evaluation with a started interview, consented: ready for answers. */
export async function consentedInterview(api: ApiClient, setup: InterviewSetup) {
  const evaluation = await createEvaluation(api, setup);
  const session = await createSession(api, setup.tenant, evaluation.id);
  const participant = participantClient(api, session.participant_token);
  const started = await participant.start();
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  expect((await participant.consent()).status).toBe(200);
  return { evaluation, session, participant, started: started.body };
}

/** An open WebSocket with the frames it received, in order. */
export type Socket = { ws: WebSocket; next(): Promise<any>; close(): Promise<void> };

/**
 * Opens the realtime door, by header or by `bearer.<token>` subprotocol; rejects with the HTTP
 * status (and the body). `headers` go with the upgrade (e.g. `X-Forwarded-For`).
 */
export function openSocket(
  url: string,
  token: string,
  via: "header" | "subprotocol" = "header",
  headers: Record<string, string> = {},
): Promise<Socket> {
  const ws =
    via === "header"
      ? new WebSocket(url, { headers: { ...headers, authorization: `Bearer ${token}` } })
      : new WebSocket(url, ["evalp.v1", `bearer.${token}`]);
  const received: unknown[] = [];
  const waiting: ((frame: unknown) => void)[] = [];
  ws.on("message", (data) => {
    const frame = JSON.parse(data.toString());
    checkFrame(url, frame);
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else received.push(frame);
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () =>
      resolve({
        ws,
        next: () =>
          received.length > 0
            ? Promise.resolve(received.shift())
            : new Promise((deliver) => waiting.push(deliver)),
        close: () =>
          new Promise((done) => {
            ws.once("close", () => done());
            ws.close();
          }),
      }),
    );
    ws.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on("end", () =>
        reject(
          Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode, body }),
        ),
      );
    });
    ws.once("error", reject);
  });
}
