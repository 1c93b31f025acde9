import { idempotencyId, operatorScope, redisKeys } from "@evalp/gateway";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

// A write whose answer the gateway gave up on (504 after UPSTREAM_TIMEOUT_MS) while its plane went
// on to commit: a retry under the same key never runs it a second time (docs/idempotency.md).
const REQUEST_TIMEOUT_MS = 20_000;
const context = useStack({ UPSTREAM_TIMEOUT_MS: "2000", REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
/** The tenant's user, as the gateway scopes its keys. */
let userScope: string;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  const principal = await api.get("/v1/auth/principal", { token: tenant.token });
  userScope = operatorScope(principal.body.kind, principal.body.principal_id, tenant.organizationId);
});

/** The Redis lock of a key sent by the tenant's user on `POST ENV/webhooks`. */
function webhookLock(key: string): string {
  const route = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id/webhooks";
  return redisKeys(stack.config.REDIS_KEY_PREFIX).idempotencyLock(
    idempotencyId(userScope, "POST", route, key),
  );
}

/**
 * Holds, from outside, an advisory lock a plane takes inside its write transaction, so that a
 * write waits there, after its key was recorded in that transaction and before it commits: the
 * webhooks plane's on the environment's endpoint quota, control's on its subject count.
 */
async function holdAdvisoryLock(pool: Stack["db"], key: string) {
  const client = await pool.connect();
  await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [key]);
  return {
    /** Sessions of the database waiting for a lock now. */
    async waiters(): Promise<number> {
      const found = await client.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return found.rows[0].n as number;
    },
    async release() {
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key]);
      client.release();
    },
  };
}

const holdEndpointQuota = (environmentId: string) =>
  holdAdvisoryLock(stack.pool("webhooks"), `quota:${environmentId}:webhook_endpoints`);
const holdSubjectCount = (environmentId: string) =>
  holdAdvisoryLock(stack.db, `subject_count:${environmentId}`);

describe("Idempotency-Key after a lost answer", () => {
  it("answers a retry 409 while the first run is still going, then with its committed result, never running it twice", async () => {
    const key = ik();
    const body = { url: "http://127.0.0.1:9/lost-answer", event_types: ["subject.imported"] };
    const post = () => api.post(`${tenant.env}/webhooks`, body, { token: tenant.token, idempotencyKey: key });
    const held = await holdEndpointQuota(tenant.environmentId);
    let released = false;
    try {
      // The gateway stops waiting; the plane holds its transaction open behind the lock. Meanwhile
      // the key's lock lives as long as the longest request may (REQUEST_TIMEOUT_MS) and a margin.
      const sent = post();
      const lockMs = await vi.waitFor(async () => {
        const left = await stack.redis.pttl(webhookLock(key));
        expect(left).toBeGreaterThan(0);
        return left;
      });
      expect(lockMs).toBeGreaterThan(REQUEST_TIMEOUT_MS - 2_000);
      expect(lockMs).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS + 5_000);
      const lost = await sent;
      expectError(lost, 504, "upstream_timeout");
      // Released by its owner once answered.
      expect(await stack.redis.exists(webhookLock(key))).toBe(0);
      expect(await held.waiters()).toBeGreaterThan(0);

      // The outcome is not known yet: 409 with Retry-After, and nothing runs a second time.
      const early = await post();
      expectError(early, 409, "idempotency_key_in_use");
      expect(early.headers.get("retry-after")).toBe("1");
      expect(early.headers.get("idempotent-replayed")).toBeNull();

      await held.release();
      released = true;
    } finally {
      if (!released) await held.release();
    }

    // Another request under the key is refused once the first run is known, by the plane's record
    // of it (the gateway stored nothing): 409 until then, never a second endpoint.
    await vi.waitFor(
      async () => {
        const other = await api.post(
          `${tenant.env}/webhooks`,
          { ...body, url: "http://127.0.0.1:9/another-body" },
          { token: tenant.token, idempotencyKey: key },
        );
        expectError(other, 422, "idempotency_key_reused");
      },
      { timeout: 15_000, interval: 200 },
    );

    // Once the first run committed, a retry gets its result: its endpoint, its secret.
    const answered = await vi.waitFor(
      async () => {
        const retried = await post();
        expect(retried.status, retried.text).toBe(201);
        return retried;
      },
      { timeout: 15_000, interval: 200 },
    );
    const rows = await stack
      .pool("webhooks")
      .query("SELECT id FROM webhook_endpoints WHERE environment_id = $1 AND url = $2", [
        tenant.environmentId,
        body.url,
      ]);
    expect(rows.rows.map((row) => row.id)).toEqual([answered.body.id]);
    expect(answered.body.secret).toEqual(expect.any(String));

    // One audit record of the creation, written with it.
    const audits = await stack
      .pool("webhooks")
      .query("SELECT count(*)::int AS n FROM outbox WHERE payload->>'resource_id' = $1", [answered.body.id]);
    expect(audits.rows[0].n).toBe(1);
    // The quota counted it once.
    const quotas = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
    expect(quotas.body.usage.webhook_endpoints).toBe(1);

    // From then on the gateway's record answers, verbatim.
    const replayed = await post();
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body).toEqual(answered.body);
  });

  it("gives a subject import retried after a timeout its first batch: one import, one audit record, one event", async () => {
    const key = ik();
    const body = {
      items: ["lost-1", "lost-2"].map((external_id) => ({
        external_id,
        identity_mode: "anonymous",
        profile: {},
      })),
    };
    const post = () =>
      api.post(`${tenant.env}/subjects/batch`, body, { token: tenant.token, idempotencyKey: key });
    const held = await holdSubjectCount(tenant.environmentId);
    let released = false;
    try {
      expectError(await post(), 504, "upstream_timeout");
      expectError(await post(), 409, "idempotency_key_in_use");
      await held.release();
      released = true;
    } finally {
      if (!released) await held.release();
    }
    const answered = await vi.waitFor(
      async () => {
        const retried = await post();
        expect(retried.status, retried.text).toBe(200);
        return retried;
      },
      { timeout: 15_000, interval: 200 },
    );
    const events = await stack.db.query(
      "SELECT payload::text AS payload FROM outbox WHERE event_type = 'subject.imported' AND environment_id = $1",
      [tenant.environmentId],
    );
    expect(events.rows).toHaveLength(1);
    expect(events.rows[0].payload).toContain(answered.body.batch_id);
    const audits = await stack.db.query(
      "SELECT count(*)::int AS n FROM audit_events WHERE action = 'subjects.imported' AND environment_id = $1",
      [tenant.environmentId],
    );
    expect(audits.rows[0].n).toBe(1);
    const subjects = await stack.db.query(
      "SELECT count(*)::int AS n FROM subjects WHERE environment_id = $1 AND external_id LIKE 'lost-%'",
      [tenant.environmentId],
    );
    expect(subjects.rows[0].n).toBe(2);
    const quotas = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
    expect(quotas.body.usage.active_subjects).toBe(2);
  });

  it("runs a retry again when the write committed nothing", async () => {
    const key = ik();
    const body = { url: "http://127.0.0.1:9/nothing-committed", event_types: ["subject.imported"] };
    const post = () => api.post(`${tenant.env}/webhooks`, body, { token: tenant.token, idempotencyKey: key });
    // The plane's table is briefly gone: the write fails inside its transaction, which rolls back.
    await stack.pool("webhooks").query("ALTER TABLE webhook_endpoints RENAME TO webhook_endpoints_away");
    let failed: Awaited<ReturnType<typeof post>>;
    try {
      failed = await post();
    } finally {
      await stack.pool("webhooks").query("ALTER TABLE webhook_endpoints_away RENAME TO webhook_endpoints");
    }
    expectError(failed, 500, "internal");
    const retried = await post();
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    const rows = await stack
      .pool("webhooks")
      .query("SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = $1", [body.url]);
    expect(rows.rows[0].n).toBe(1);
  });
});
