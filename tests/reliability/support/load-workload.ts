import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { ApiClient, ApiResponse } from "../../api/support/client.js";
import { createKey, createTenant, ik, type Tenant } from "../../api/support/fixtures.js";
import { createEvaluation, createSession, interviewSetup } from "../../api/support/interview.js";
import type { ProcessName } from "../../api/support/processes.js";
import type { LoadOp } from "./load-clients.js";

/** An op of the workload and what it runs through, so that an outage can be told from a bug. */
export type WorkloadOp = LoadOp & {
  /** Every process the request's handling calls, besides the credential check. */
  needs: ProcessName[];
  /** An operator credential, which the gateway resolves with control (or may remember). */
  authenticated: boolean;
  /** For a write: reads what an answered 2xx created back, by the id in that answer. */
  readBack?: (created: ApiResponse) => Promise<ApiResponse>;
};

export const WORKLOAD_OPS = [
  "readApp",
  "importSubject",
  "readBundle",
  "createTemplate",
  "preview",
  "readEvaluation",
  "createEvaluation",
  "readWebhook",
  "createWebhook",
  "readQuotas",
  "transcript",
] as const;
export type WorkloadOpName = (typeof WORKLOAD_OPS)[number];

/** One tenant ready for a realistic mix: an API key, a published bundle, an evaluation, a session. */
export type Workload = {
  tenant: Tenant;
  apiKey: string;
  subjectId: string;
  bundleId: string;
  evaluationId: string;
  ops: Record<WorkloadOpName, WorkloadOp>;
};

const SCOPES = [
  "org:read",
  "subjects:write",
  "bundles:read",
  "bundles:write",
  "templates:write",
  "evaluations:read",
  "evaluations:write",
  "webhooks:read",
  "webhooks:write",
];

/**
 * Sets up a tenant through the API and builds the ops of the mix, each touching one plane (or,
 * where the product does, several): reads with an API key, idempotent creations, a preview, and a
 * participant's transcript (which needs no control at all).
 */
export async function prepareWorkload(api: ApiClient): Promise<Workload> {
  const tenant = await createTenant(api);
  const { secret: apiKey } = await createKey(api, tenant, SCOPES);
  // Creations in a loop must not run into the default quotas.
  const quotas = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
  const raised = await api.patch(
    `${tenant.env}/quotas`,
    {
      expected_revision: quotas.body.revision,
      limits: { ...quotas.body.limits, active_subjects: 1e9, evaluations: 1e9, webhook_endpoints: 1e9 },
    },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(raised.status, raised.text).toBe(200);
  const setup = await interviewSetup(api, tenant);
  const evaluation = await createEvaluation(api, setup);
  const session = await createSession(api, tenant, evaluation.id);
  // Endpoints for an event type nothing emits here: no deliveries, so no background load.
  const endpointBody = { url: "http://127.0.0.1:9/hook", event_types: ["webhook.test"] };
  const endpoint = await api.post(`${tenant.env}/webhooks`, endpointBody, {
    token: tenant.token,
    idempotencyKey: ik(),
  });
  expect(endpoint.status, endpoint.text).toBe(201);

  const key = (signal: AbortSignal) => ({ apiKey, signal });
  const write = (signal: AbortSignal) => ({ apiKey, signal, idempotencyKey: ik() });
  const read = (path: string) => () => api.get(path, { apiKey });
  const ops: Record<WorkloadOpName, WorkloadOp> = {
    readApp: {
      name: "readApp",
      needs: ["gateway", "control"],
      authenticated: true,
      run: (signal) => api.get(tenant.app, key(signal)),
    },
    importSubject: {
      name: "importSubject",
      needs: ["gateway", "control"],
      authenticated: true,
      run: (signal) =>
        api.post(
          `${tenant.env}/subjects/batch`,
          { items: [{ external_id: randomUUID(), identity_mode: "anonymous", profile: { n: 1 } }] },
          write(signal),
        ),
      readBack: (created) => read(`${tenant.env}/subjects/${created.body.receipts[0].subject_id}`)(),
    },
    readBundle: {
      name: "readBundle",
      needs: ["gateway", "platform"],
      authenticated: true,
      run: (signal) => api.get(`${tenant.app}/bundles/${setup.bundleId}`, key(signal)),
    },
    createTemplate: {
      name: "createTemplate",
      needs: ["gateway", "platform"],
      authenticated: true,
      run: (signal) =>
        api.post(
          `${tenant.app}/templates`,
          {
            name: "Load",
            definitions: [
              {
                business_id: "load.context",
                locale: "en",
                name: "Context",
                content: { kind: "context", variables: {} },
              },
            ],
          },
          write(signal),
        ),
      readBack: (created) => read(`${tenant.app}/templates/${created.body.id}`)(),
    },
    preview: {
      name: "preview",
      needs: ["gateway", "platform"],
      authenticated: true,
      run: (signal) =>
        api.post(
          `${tenant.app}/bundles/${setup.bundleId}/preview`,
          { answers: { q1: { value: 4 } }, context: {}, respondent_id: "r-1", signals: {} },
          key(signal),
        ),
    },
    readEvaluation: {
      name: "readEvaluation",
      needs: ["gateway", "interview"],
      authenticated: true,
      run: (signal) => api.get(`${tenant.env}/evaluations/${evaluation.id}`, key(signal)),
    },
    createEvaluation: {
      name: "createEvaluation",
      // The interview plane checks the subject and quota with control and the bundle with platform.
      needs: ["gateway", "interview", "control", "platform"],
      authenticated: true,
      run: (signal) =>
        api.post(
          `${tenant.env}/evaluations`,
          { subject_id: setup.subjectId, bundle_id: setup.bundleId },
          write(signal),
        ),
      readBack: (created) => read(`${tenant.env}/evaluations/${created.body.id}`)(),
    },
    readWebhook: {
      name: "readWebhook",
      needs: ["gateway", "webhooks"],
      authenticated: true,
      run: (signal) => api.get(`${tenant.env}/webhooks/${endpoint.body.id}`, key(signal)),
    },
    createWebhook: {
      name: "createWebhook",
      // The webhooks plane reads the endpoint quota's limit from control.
      needs: ["gateway", "webhooks", "control"],
      authenticated: true,
      run: (signal) => api.post(`${tenant.env}/webhooks`, endpointBody, write(signal)),
      readBack: (created) => read(`${tenant.env}/webhooks/${created.body.id}`)(),
    },
    readQuotas: {
      name: "readQuotas",
      // Control counts usage of evaluations, sessions and endpoints with the planes that own them.
      needs: ["gateway", "control", "interview", "webhooks"],
      authenticated: true,
      run: (signal) => api.get(`${tenant.env}/quotas`, key(signal)),
    },
    transcript: {
      name: "transcript",
      // A participant token is verified by the gateway itself; only the interview plane answers.
      needs: ["gateway", "interview"],
      authenticated: false,
      run: (signal) =>
        api.get("/v1/participant/interview/transcript", { token: session.participant_token, signal }),
    },
  };
  return {
    tenant,
    apiKey,
    subjectId: setup.subjectId,
    bundleId: setup.bundleId,
    evaluationId: evaluation.id,
    ops,
  };
}
