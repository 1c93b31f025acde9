import { createClient } from "@connectrpc/connect";
import { createServiceTransport, serviceCaller } from "@evalp/kit";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

const DEFAULTS = {
  active_participant_sessions: 100,
  active_subjects: 10000,
  behavioral_event_batch_size: 100,
  continuous_event_batch_size: 100,
  evaluations: 10000,
  programs: 100,
  webhook_endpoints: 20,
};

describe("GET/PATCH ENV/quotas (#6)", () => {
  it("starts at the contract's defaults, revision 1, with usage counted", async () => {
    const fresh = await createTenant(api);
    await api.post(
      `${fresh.env}/programs`,
      { name: "Leadership" },
      { token: fresh.token, idempotencyKey: ik() },
    );
    const quotas = await api.get(`${fresh.env}/quotas`, { token: fresh.token });
    expect(quotas.status).toBe(200);
    expect(quotas.body).toEqual({
      environment_id: fresh.environmentId,
      limits: DEFAULTS,
      usage: {
        active_participant_sessions: 0,
        active_subjects: 0,
        behavioral_event_batch_size: 0,
        continuous_event_batch_size: 0,
        evaluations: 0,
        programs: 1,
        webhook_endpoints: 0,
      },
      revision: 1,
      schema_version: 1,
    });
  });

  it("replaces the limits and bumps the revision; a stale revision is 409 with both revisions", async () => {
    const limits = { ...DEFAULTS, programs: 3 };
    const updated = await api.patch(
      `${tenant.env}/quotas`,
      { expected_revision: 1, limits },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ limits, revision: 2 });
    const stale = await api.patch(
      `${tenant.env}/quotas`,
      { expected_revision: 1, limits: DEFAULTS },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(stale, 409, "revision_conflict").context).toEqual({
      expected_revision: 1,
      current_revision: 2,
    });
    expect((await api.get(`${tenant.env}/quotas`, { token: tenant.token })).body.limits.programs).toBe(3);
    const outbox = await stack.db.query(
      "SELECT payload FROM outbox WHERE event_type = 'quota.updated' AND environment_id = $1",
      [tenant.environmentId],
    );
    expect(outbox.rows).toHaveLength(1);
    expect(outbox.rows[0].payload).toMatchObject({ type: "quota.updated", data: { revision: 2, limits } });
  });

  it("lets exactly one of concurrent updates with the same revision win", async () => {
    const fresh = await createTenant(api);
    const current = (await api.get(`${fresh.env}/quotas`, { token: fresh.token })).body.revision;
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.patch(
          `${fresh.env}/quotas`,
          { expected_revision: current, limits: { ...DEFAULTS, programs: i } },
          { token: fresh.token, idempotencyKey: ik() },
        ),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(9);
    expect((await api.get(`${fresh.env}/quotas`, { token: fresh.token })).body.revision).toBe(current + 1);
  });

  it("requires all seven limits as integers from 0 to 1,000,000,000", async () => {
    const { programs: _, ...six } = DEFAULTS;
    const bad = await api.patch(
      `${tenant.env}/quotas`,
      {
        expected_revision: 2,
        limits: { ...six, evaluations: -1, webhook_endpoints: 1_000_000_001, extra: 1 },
      },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([
      expect.objectContaining({
        type: "greater_than_equal",
        loc: ["body", "limits", "evaluations"],
        ctx: { ge: 0 },
      }),
      expect.objectContaining({ type: "missing", loc: ["body", "limits", "programs"] }),
      expect.objectContaining({
        type: "less_than_equal",
        loc: ["body", "limits", "webhook_endpoints"],
        ctx: { le: 1000000000 },
      }),
      expect.objectContaining({ type: "extra_forbidden", loc: ["body", "limits", "extra"] }),
    ]);
  });

  it("needs quotas:write to change and org:read to read", async () => {
    const reader = await createKey(api, tenant, ["org:read"]);
    expect((await api.get(`${tenant.env}/quotas`, { token: reader.secret })).status).toBe(200);
    const denied = await api.patch(
      `${tenant.env}/quotas`,
      { expected_revision: 2, limits: DEFAULTS },
      { token: reader.secret, idempotencyKey: ik() },
    );
    expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "quotas:write" });
  });
});

describe("the programs quota", () => {
  it("blocks creations past the limit with 409 quota_exceeded, and a lowered limit blocks new ones only", async () => {
    const fresh = await createTenant(api);
    await api.patch(
      `${fresh.env}/quotas`,
      { expected_revision: 1, limits: { ...DEFAULTS, programs: 2 } },
      { token: fresh.token, idempotencyKey: ik() },
    );
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.post(`${fresh.env}/programs`, { name: `P${i}` }, { token: fresh.token, idempotencyKey: ik() }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    const refused = results.find((r) => r.status === 409);
    expect(expectError(refused, 409, "quota_exceeded").context).toEqual({
      counter: "programs",
      limit: 2,
      usage: 2,
    });
    await api.patch(
      `${fresh.env}/quotas`,
      { expected_revision: 2, limits: { ...DEFAULTS, programs: 1 } },
      { token: fresh.token, idempotencyKey: ik() },
    );
    const quotas = await api.get(`${fresh.env}/quotas`, { token: fresh.token });
    expect(quotas.body.usage.programs).toBe(2);
    expect(quotas.body.limits.programs).toBe(1);
    const list = await api.get(`${fresh.env}/programs`, { token: fresh.token });
    expect(list.body.items).toHaveLength(2);
  });
});

describe("QuotaService.GetLimits (for the other planes)", () => {
  it("answers an environment's current limits over Connect", async () => {
    const fresh = await createTenant(api);
    await api.patch(
      `${fresh.env}/quotas`,
      { expected_revision: 1, limits: { ...DEFAULTS, evaluations: 12 } },
      { token: fresh.token, idempotencyKey: ik() },
    );
    const client = createClient(
      QuotaService,
      createServiceTransport(
        "control",
        () => stack.config.CONTROL_URL,
        5_000,
        serviceCaller(stack.config, "interview"),
      ),
    );
    const answer = await client.getLimits({ environmentId: fresh.environmentId });
    expect(Number(answer.limits?.evaluations)).toBe(12);
    expect(Number(answer.limits?.programs)).toBe(100);
    await expect(client.getLimits({ environmentId: "not-an-id" })).rejects.toMatchObject({
      rawMessage: expect.stringContaining("not found"),
    });
  });
});
