import { expect, vi } from "vitest";
import type { ApiClient } from "./client.js";
import { ik, type Tenant } from "./fixtures.js";

/** Creates a webhook endpoint in the tenant's environment and returns its body (with `secret`). */
export async function createEndpoint(
  api: ApiClient,
  tenant: Tenant,
  body: { url: string; event_types: string[]; enabled?: boolean; secret?: string },
) {
  const created = await api.post(`${tenant.env}/webhooks`, body, {
    token: tenant.token,
    idempotencyKey: ik(),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { id: string; secret: string; url: string; enabled: boolean; event_types: string[] };
}

/** Imports subjects, which emits one `subject.imported` event. */
export async function importSubjects(api: ApiClient, tenant: Tenant, externalIds: string[]) {
  const imported = await api.post(
    `${tenant.env}/subjects/batch`,
    { items: externalIds.map((external_id) => ({ external_id, identity_mode: "anonymous", profile: {} })) },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  return imported.body as { batch_id: string; receipts: { subject_id: string }[] };
}

/** Sets one quota limit (the others unchanged), which emits `quota.updated`. */
export async function setQuota(api: ApiClient, tenant: Tenant, counter: string, value: number) {
  const current = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
  const updated = await api.patch(
    `${tenant.env}/quotas`,
    { expected_revision: current.body.revision, limits: { ...current.body.limits, [counter]: value } },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  return updated.body;
}

/** The endpoint's deliveries as the API lists them (newest first), optionally by status. */
export async function deliveriesOf(api: ApiClient, tenant: Tenant, endpointId: string, status?: string) {
  const query = new URLSearchParams({ endpoint_id: endpointId, limit: "100", ...(status && { status }) });
  const listed = await api.get(`${tenant.env}/webhook-deliveries?${query}`, { token: tenant.token });
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return listed.body.items as Record<string, any>[];
}

/** Polls a delivery until `check` passes on it (GET with attempts), and returns it. */
export async function waitForDelivery(
  api: ApiClient,
  tenant: Tenant,
  deliveryId: string,
  check: (delivery: Record<string, any>) => void,
  timeout = 10_000,
) {
  return vi.waitFor(
    async () => {
      const got = await api.get(`${tenant.env}/webhook-deliveries/${deliveryId}`, { token: tenant.token });
      expect(got.status).toBe(200);
      check(got.body);
      return got.body as Record<string, any>;
    },
    { timeout, interval: 50 },
  );
}
