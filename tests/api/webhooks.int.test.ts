import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ReceivedRequest, Receiver } from "@evalp/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";
import {
  createEndpoint,
  deliveriesOf,
  importSubjects,
  setQuota,
  waitForDelivery,
} from "./support/webhooks.js";

// A shortened schedule: 3 attempts, 200 ms then 400 ms apart (±20 %).
const context = useStack({ WEBHOOK_RETRY_SCHEDULE_MS: "200,400", WEBHOOK_ALLOW_PRIVATE: "true" });
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
/** Per path: the status the receiver answers (default 204), a Retry-After, and a delay. */
const answers = new Map<string, { status: number; retryAfter?: string; delayMs?: number }>();

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  receiver = await startCheckedReceiver(api);
  receiver.respond((request) => answers.get(request.path) ?? { status: 204 });
});
afterAll(async () => {
  await receiver?.close();
});

const bodies = (requests: ReceivedRequest[]) => requests.map((request) => JSON.parse(request.body));

describe("webhook endpoints (#12)", () => {
  it("audits endpoint mutations in the organization's trail, never with the secret", async () => {
    const owner = await createTenant(api);
    const endpoint = await createEndpoint(api, owner, { url: `${receiver.url}/audited`, event_types: ["*"] });
    const rotated = await api.post(`${owner.env}/webhooks/${endpoint.id}/rotate-secret`, undefined, {
      token: owner.token,
      idempotencyKey: ik(),
    });
    expect(rotated.status).toBe(200);
    await vi.waitFor(
      async () => {
        const trail = await api.get(`${owner.org}/audit-events?resource_type=webhook_endpoint`, {
          token: owner.token,
        });
        expect(trail.body.items.map((e: { action: string }) => e.action)).toEqual([
          "webhook_endpoint.secret_rotated",
          "webhook_endpoint.created",
        ]);
        expect(trail.text).not.toContain(endpoint.secret);
        expect(trail.text).not.toContain(rotated.body.secret);
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it("creates with a secret shown once, lists and gets without it, counts against the quota, deletes", async () => {
    const fresh = await createTenant(api);
    const missingKey = await api.post(
      `${fresh.env}/webhooks`,
      { url: `${receiver.url}/crud`, event_types: ["*"] },
      { token: fresh.token },
    );
    expect(missingKey.status).toBe(422);
    expect(missingKey.body.detail[0].loc).toEqual(["header", "Idempotency-Key"]);

    const created = await createEndpoint(api, fresh, {
      url: `${receiver.url}/crud`,
      event_types: ["*", "*"],
    });
    expect(created).toEqual({
      id: expect.any(String),
      environment_id: fresh.environmentId,
      url: `${receiver.url}/crud`,
      enabled: true,
      event_types: ["*"],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const got = await api.get(`${fresh.env}/webhooks/${created.id}`, { token: fresh.token });
    expect(got.body).toEqual({ ...created, secret: undefined });
    expect(Object.keys(got.body)).not.toContain("secret");
    const listed = await api.get(`${fresh.env}/webhooks?limit=1`, { token: fresh.token });
    expect(listed.body).toEqual({ items: [got.body], next_cursor: null });

    const quotas = await api.get(`${fresh.env}/quotas`, { token: fresh.token });
    expect(quotas.body.usage.webhook_endpoints).toBe(1);
    await setQuota(api, fresh, "webhook_endpoints", 1);
    const over = await api.post(
      `${fresh.env}/webhooks`,
      { url: `${receiver.url}/crud`, event_types: ["quota.updated"] },
      { token: fresh.token, idempotencyKey: ik() },
    );
    expect(expectError(over, 409, "quota_exceeded").context).toEqual({
      counter: "webhook_endpoints",
      limit: 1,
      usage: 1,
    });

    const deleted = await api.call("DELETE", `${fresh.env}/webhooks/${created.id}`, undefined, {
      token: fresh.token,
      idempotencyKey: ik(),
    });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    const gone = await api.get(`${fresh.env}/webhooks/${created.id}`, { token: fresh.token });
    expect(expectError(gone, 404, "not_found").context).toEqual({ resource: "webhook_endpoint" });
    const after = await api.get(`${fresh.env}/quotas`, { token: fresh.token });
    expect(after.body.usage.webhook_endpoints).toBe(0);
  });

  it("validates the body in the contract's shape, secrets included", async () => {
    const bad = await api.post(
      `${tenant.env}/webhooks`,
      { url: `${receiver.url}/x`, event_types: [], extra: 1 },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(bad.status).toBe(422);
    expect(
      bad.body.detail.map((item: { loc: string[]; type: string }) => [item.loc.join("."), item.type]),
    ).toEqual(
      expect.arrayContaining([
        ["body.event_types", "too_short"],
        ["body.extra", "extra_forbidden"],
      ]),
    );
    const unknownType = await api.post(
      `${tenant.env}/webhooks`,
      { url: `${receiver.url}/x`, event_types: ["subject.deleted"] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(unknownType.body.detail[0]).toMatchObject({ loc: ["body", "event_types", "0"], type: "enum" });
    const shortSecret = await api.post(
      `${tenant.env}/webhooks`,
      {
        url: `${receiver.url}/x`,
        event_types: ["*"],
        secret: `whsec_${Buffer.alloc(16).toString("base64")}`,
      },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(shortSecret.status).toBe(422);
    expect(shortSecret.body.detail).toEqual([
      {
        loc: ["body", "secret"],
        type: "value_error",
        msg: "Value error, secret must encode 24 to 64 bytes",
        input: `whsec_${Buffer.alloc(16).toString("base64")}`,
        ctx: { error: "secret must encode 24 to 64 bytes" },
      },
    ]);
  });

  it("answers 404 for an environment path that mixes organizations, and 403 without webhooks scopes", async () => {
    const other = await createTenant(api);
    const mixed = await api.get(
      `${other.org}/apps/${tenant.appId}/environments/${tenant.environmentId}/webhooks`,
      {
        token: other.token,
      },
    );
    expect(expectError(mixed, 404, "not_found").context).toEqual({ resource: "environment" });
    const { createKey } = await import("./support/fixtures.js");
    const key = await createKey(api, tenant, ["org:read"]);
    const denied = await api.get(`${tenant.env}/webhooks`, { apiKey: key.secret });
    expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "webhooks:read" });
  });
});

describe("delivery (docs/webhooks.md)", () => {
  it("posts a signed event that the standardwebhooks verifier accepts with the endpoint's secret", async () => {
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/signed`,
      event_types: ["subject.imported"],
    });
    const imported = await importSubjects(api, tenant, ["ada", "grace"]);
    const [request] = await vi.waitFor(
      () => {
        const got = receiver.at("/signed");
        expect(got).toHaveLength(1);
        return got;
      },
      { timeout: 10_000, interval: 20 },
    );
    if (!request) throw new Error("unreachable");
    expect(request.method).toBe("POST");
    expect(request.headers["content-type"]).toBe("application/json");
    const verified = new Webhook(endpoint.secret).verify(request.body, request.headers) as Record<
      string,
      any
    >;
    expect(Object.keys(verified)).toEqual(["id", "type", "timestamp", "environment_id", "data"]);
    expect(verified).toMatchObject({
      id: request.headers["webhook-id"],
      type: "subject.imported",
      environment_id: tenant.environmentId,
    });
    expect(JSON.stringify(verified.data)).toContain(imported.receipts[0]?.subject_id);
    expect(Number(request.headers["webhook-timestamp"])).toBeCloseTo(Date.now() / 1000, -1);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(request.body, request.headers),
    ).toThrow();

    const [delivery] = await deliveriesOf(api, tenant, endpoint.id);
    const done = await waitForDelivery(api, tenant, delivery?.id, (d) => expect(d.status).toBe("succeeded"));
    expect(done).toEqual({
      id: delivery?.id,
      endpoint_id: endpoint.id,
      event_id: verified.id,
      event_type: "subject.imported",
      status: "succeeded",
      attempt_count: 1,
      created_at: expect.any(String),
      delivered_at: expect.any(String),
      response_status: 204,
      attempts: [{ attempted_at: expect.any(String), response_status: 204, duration_ms: expect.any(Number) }],
    });
  });

  it("delivers only the event types an endpoint names, or all with *", async () => {
    const quotaOnly = await createEndpoint(api, tenant, {
      url: `${receiver.url}/quota-only`,
      event_types: ["quota.updated"],
    });
    const everything = await createEndpoint(api, tenant, {
      url: `${receiver.url}/everything`,
      event_types: ["*"],
    });
    await importSubjects(api, tenant, ["filter-1"]);
    await setQuota(api, tenant, "programs", 50);
    await vi.waitFor(
      () => {
        expect(bodies(receiver.at("/everything")).map((body) => body.type)).toEqual(
          expect.arrayContaining(["subject.imported", "quota.updated"]),
        );
        expect(bodies(receiver.at("/quota-only")).map((body) => body.type)).toEqual(["quota.updated"]);
      },
      { timeout: 10_000, interval: 50 },
    );
    const listed = await deliveriesOf(api, tenant, quotaOnly.id);
    expect(listed.map((delivery) => delivery.event_type)).toEqual(["quota.updated"]);
    expect((await deliveriesOf(api, tenant, everything.id)).length).toBeGreaterThanOrEqual(2);
  });

  it("retries on the schedule to dead_letter (HTTP 500); a replay keeps counting and succeeds", async () => {
    answers.set("/flaky", { status: 500 });
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/flaky`,
      event_types: ["webhook.test"],
    });
    const tested = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ event_type: "webhook.test", status: "pending", attempt_count: 0 });
    const dead = await waitForDelivery(api, tenant, tested.body.id, (d) =>
      expect(d.status).toBe("dead_letter"),
    );
    expect(dead).toMatchObject({ attempt_count: 3, last_error: "HTTP 500", response_status: 500 });
    expect(dead.next_attempt_at).toBeUndefined();
    const times = receiver.at("/flaky").map((request) => request.receivedAt);
    expect(times).toHaveLength(3);
    const gaps = [(times[1] as number) - (times[0] as number), (times[2] as number) - (times[1] as number)];
    expect(gaps[0]).toBeGreaterThanOrEqual(160);
    expect(gaps[1]).toBeGreaterThanOrEqual(320);
    expect(dead.attempts.map((attempt: { error: string }) => attempt.error)).toEqual([
      "HTTP 500",
      "HTTP 500",
      "HTTP 500",
    ]);
    const ids = new Set(receiver.at("/flaky").map((request) => request.headers["webhook-id"]));
    expect([...ids]).toEqual([dead.event_id]);

    // Announced on webhooks.dead_letter (this stack's prefix).
    const jsm = await jetstreamManager(stack.nats);
    await vi.waitFor(
      async () => {
        const last = await jsm.streams.getMessage(stack.config.WEBHOOKS_STREAM, {
          last_by_subj: `${stack.config.WEBHOOKS_SUBJECT_PREFIX}.dead_letter`,
        });
        expect(last?.json()).toMatchObject({
          delivery_id: dead.id,
          last_error: "HTTP 500",
          attempt_count: 3,
        });
      },
      { timeout: 5_000, interval: 50 },
    );
    const listedDead = await deliveriesOf(api, tenant, endpoint.id, "dead_letter");
    expect(listedDead.map((delivery) => delivery.id)).toEqual([dead.id]);

    answers.set("/flaky", { status: 200 });
    const replayed = await api.post(`${tenant.env}/webhook-deliveries/${dead.id}/replay`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ id: dead.id, status: "pending", attempt_count: 3 });
    const succeeded = await waitForDelivery(api, tenant, dead.id, (d) => expect(d.status).toBe("succeeded"));
    expect(succeeded).toMatchObject({
      attempt_count: 4,
      response_status: 200,
      delivered_at: expect.any(String),
    });
    expect(succeeded.attempts).toHaveLength(4);
    expect(receiver.at("/flaky").map((request) => request.headers["webhook-id"])).toEqual(
      Array(4).fill(dead.event_id),
    );
  });

  it("honours Retry-After on 503, and disabling dead-letters the waiting delivery; nothing more is sent", async () => {
    answers.set("/busy", { status: 503, retryAfter: "60" });
    const endpoint = await createEndpoint(api, tenant, { url: `${receiver.url}/busy`, event_types: ["*"] });
    const tested = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    const waiting = await waitForDelivery(api, tenant, tested.body.id, (d) =>
      expect(d.status).toBe("failed"),
    );
    expect(waiting).toMatchObject({ attempt_count: 1, last_error: "HTTP 503", response_status: 503 });
    expect(Date.parse(waiting.next_attempt_at) - Date.now()).toBeGreaterThan(50_000);

    const disabled = await api.patch(
      `${tenant.env}/webhooks/${endpoint.id}`,
      { enabled: false },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, disabled_at: expect.any(String) });
    const ended = await api.get(`${tenant.env}/webhook-deliveries/${tested.body.id}`, {
      token: tenant.token,
    });
    expect(ended.body).toMatchObject({
      status: "dead_letter",
      last_error: "endpoint disabled",
      attempt_count: 1,
    });

    const before = receiver.at("/busy").length;
    await importSubjects(api, tenant, ["after-disable"]);
    await setQuota(api, tenant, "programs", 60);
    // Another endpoint hears both events, so both were consumed by now.
    const witness = await createEndpoint(api, tenant, {
      url: `${receiver.url}/witness`,
      event_types: ["quota.updated"],
    });
    await setQuota(api, tenant, "programs", 61);
    await vi.waitFor(() => expect(receiver.at("/witness")).toHaveLength(1), {
      timeout: 10_000,
      interval: 50,
    });
    expect(receiver.at("/busy")).toHaveLength(before);
    expect((await deliveriesOf(api, tenant, endpoint.id)).map((d) => d.id)).toEqual([tested.body.id]);

    const enabled = await api.patch(
      `${tenant.env}/webhooks/${endpoint.id}`,
      { enabled: true },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(enabled.body.enabled).toBe(true);
    expect(Object.keys(enabled.body)).not.toContain("disabled_at");
    expect(witness.id).toBeDefined();
  });

  it("sends nothing that waited in a backlog once disabling answered (beyond a short bound)", async () => {
    // A slow receiver: 16 attempts in flight (the endpoint's bound) and the rest waiting their turn.
    answers.set("/backlog", { status: 204, delayMs: 2_000 });
    const own = await createTenant(api);
    const endpoint = await createEndpoint(api, own, {
      url: `${receiver.url}/backlog`,
      event_types: ["subject.imported"],
    });
    for (let i = 0; i < 48; i++) await importSubjects(api, own, [`backlog-${i}`]);
    // The whole backlog is there before the endpoint is disabled: an event that reaches the
    // fan-out afterwards gets no delivery at all (a loaded machine's relay can lag the imports).
    await vi.waitFor(
      async () => {
        expect(receiver.at("/backlog").length).toBeGreaterThanOrEqual(16);
        expect(await deliveriesOf(api, own, endpoint.id)).toHaveLength(48);
      },
      { timeout: 10_000, interval: 50 },
    );
    const disabled = await api.patch(
      `${own.env}/webhooks/${endpoint.id}`,
      { enabled: false },
      { token: own.token, idempotencyKey: ik() },
    );
    expect(disabled.status).toBe(200);
    const answeredAt = performance.timeOrigin + performance.now();
    // Without the bound, the next 16 would start as the first ones are answered, within 2 s.
    await sleep(3_000);
    const late = receiver.at("/backlog").filter((request) => request.receivedAt > answeredAt + 250 + 500);
    expect(late).toEqual([]);
    const sent = receiver.at("/backlog").length;
    expect(sent).toBeLessThan(48);
    // Disabling ends every delivery it finds waiting or in flight as dead_letter; only one whose
    // success was recorded before it (a loaded machine may take the receiver's 2 s to get there)
    // stays succeeded. Those in flight have their attempt counted once the receiver answers.
    const settled = await vi.waitFor(
      async () => {
        const found = await deliveriesOf(api, own, endpoint.id);
        expect(found).toHaveLength(48);
        expect(found.filter((d) => d.status !== "dead_letter" && d.status !== "succeeded")).toEqual([]);
        expect(found.filter((d) => d.attempt_count === 0)).toHaveLength(48 - sent);
        return found;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(receiver.at("/backlog")).toHaveLength(sent);
    const succeeded = settled.filter((d) => d.status === "succeeded");
    expect(succeeded.every((d) => Date.parse(d.delivered_at) <= answeredAt)).toBe(true);
    const dead = settled.filter((d) => d.status === "dead_letter");
    expect(dead.every((d) => d.last_error === "endpoint disabled")).toBe(true);
  });

  it("counts an attempt whose endpoint was disabled while it was in flight, and its success revives nothing", async () => {
    answers.set("/slow", { status: 204, delayMs: 800 });
    const endpoint = await createEndpoint(api, tenant, { url: `${receiver.url}/slow`, event_types: ["*"] });
    const tested = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    await vi.waitFor(() => expect(receiver.at("/slow")).toHaveLength(1), { timeout: 5_000, interval: 20 });
    const disabled = await api.patch(
      `${tenant.env}/webhooks/${endpoint.id}`,
      { enabled: false },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(disabled.status).toBe(200);
    const settled = await waitForDelivery(api, tenant, tested.body.id, (d) =>
      expect(d.attempt_count).toBe(1),
    );
    expect(settled).toMatchObject({
      status: "dead_letter",
      last_error: "endpoint disabled",
      attempt_count: 1,
    });
    expect(settled.attempts).toEqual([
      { attempted_at: expect.any(String), response_status: 204, duration_ms: expect.any(Number) },
    ]);
  });

  it("410 Gone dead-letters the delivery, disables the endpoint and emits webhook.endpoint_disabled", async () => {
    answers.set("/gone", { status: 410 });
    const watcher = await createEndpoint(api, tenant, {
      url: `${receiver.url}/watch-gone`,
      event_types: ["webhook.endpoint_disabled"],
    });
    const endpoint = await createEndpoint(api, tenant, { url: `${receiver.url}/gone`, event_types: ["*"] });
    const tested = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    const dead = await waitForDelivery(api, tenant, tested.body.id, (d) =>
      expect(d.status).toBe("dead_letter"),
    );
    expect(dead).toMatchObject({ attempt_count: 1, last_error: "HTTP 410", response_status: 410 });
    const got = await api.get(`${tenant.env}/webhooks/${endpoint.id}`, { token: tenant.token });
    expect(got.body).toMatchObject({ enabled: false, disabled_at: expect.any(String) });
    await vi.waitFor(
      () => {
        const [event] = bodies(receiver.at("/watch-gone"));
        expect(event).toMatchObject({
          type: "webhook.endpoint_disabled",
          environment_id: tenant.environmentId,
          data: { endpoint_id: endpoint.id, reason: "gone" },
        });
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(watcher.id).toBeDefined();
  });

  it("disables an endpoint after 5 days of failures", async () => {
    answers.set("/failing", { status: 500 });
    await createEndpoint(api, tenant, {
      url: `${receiver.url}/watch-failing`,
      event_types: ["webhook.endpoint_disabled"],
    });
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/failing`,
      event_types: ["*"],
    });
    // Five days of failures, as the worker would have recorded them.
    await stack
      .pool("webhooks")
      .query(
        "UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1",
        [endpoint.id],
      );
    const tested = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    const dead = await waitForDelivery(api, tenant, tested.body.id, (d) =>
      expect(d.status).toBe("dead_letter"),
    );
    expect(dead).toMatchObject({ attempt_count: 1, last_error: "endpoint disabled", response_status: 500 });
    expect(
      (await api.get(`${tenant.env}/webhooks/${endpoint.id}`, { token: tenant.token })).body.enabled,
    ).toBe(false);
    await vi.waitFor(
      () =>
        expect(bodies(receiver.at("/watch-failing"))).toEqual([
          expect.objectContaining({
            data: expect.objectContaining({ endpoint_id: endpoint.id, reason: "failing" }),
          }),
        ]),
      { timeout: 10_000, interval: 50 },
    );
  });

  it("signs with both secrets for a day after a rotation", async () => {
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/rotated`,
      event_types: ["*"],
    });
    const rotated = await api.post(`${tenant.env}/webhooks/${endpoint.id}/rotate-secret`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    const [request] = await vi.waitFor(
      () => {
        const got = receiver.at("/rotated");
        expect(got).toHaveLength(1);
        return got;
      },
      { timeout: 10_000, interval: 20 },
    );
    if (!request) throw new Error("unreachable");
    expect(request.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(() => new Webhook(rotated.body.secret).verify(request.body, request.headers)).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(request.body, request.headers)).not.toThrow();
  });

  it("recovers failed and dead-lettered deliveries since a time; dry_run only counts", async () => {
    answers.set("/recover", { status: 500 });
    const since = new Date(Date.now() - 1_000).toISOString();
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/recover`,
      event_types: ["*"],
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const tested = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
        token: tenant.token,
        idempotencyKey: ik(),
      });
      ids.push(tested.body.id);
    }
    for (const id of ids) await waitForDelivery(api, tenant, id, (d) => expect(d.status).toBe("dead_letter"));
    const recover = (dryRun: boolean) =>
      api.post(
        `${tenant.env}/webhooks/${endpoint.id}/recover`,
        { since, dry_run: dryRun },
        { token: tenant.token, idempotencyKey: ik() },
      );
    expect((await recover(true)).body).toEqual({ count: 2 });
    answers.set("/recover", { status: 200 });
    expect((await recover(false)).body).toEqual({ count: 2 });
    for (const id of ids) {
      const done = await waitForDelivery(api, tenant, id, (d) => expect(d.status).toBe("succeeded"));
      expect(done.attempt_count).toBe(4);
    }
    expect((await recover(true)).body).toEqual({ count: 0 });
  });

  it("creates its durable consumer again when it disappears, and misses nothing", async () => {
    await createEndpoint(api, tenant, { url: `${receiver.url}/after-loss`, event_types: ["quota.updated"] });
    const jsm = await jetstreamManager(stack.nats);
    await jsm.consumers.delete(stack.config.EVENTS_STREAM, "webhooks");
    await setQuota(api, tenant, "programs", 70);
    await vi.waitFor(
      () =>
        expect(bodies(receiver.at("/after-loss")).map((body) => body.data.limits?.programs)).toEqual([70]),
      { timeout: 15_000, interval: 100 },
    );
  });

  it("terminates a malformed message on the stream and delivers the events stored beside it", async () => {
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/beside-malformed`,
      event_types: ["webhook.test"],
    });
    const js = jetstream(stack.nats);
    const subject = `${stack.config.EVENTS_SUBJECT_PREFIX}.${tenant.environmentId}.webhook.test`;
    const valid = randomUUID();
    const envelope = (change: Record<string, unknown>) =>
      JSON.stringify({
        id: randomUUID(),
        type: "webhook.test",
        timestamp: new Date().toISOString(),
        environment_id: tenant.environmentId,
        data: { endpoint_id: endpoint.id },
        ...change,
      });
    // Published back to back, so that the consumer likely takes them in one batch.
    await Promise.all([
      js.publish(subject, envelope({ id: "not-a-uuid" })),
      js.publish(subject, envelope({ timestamp: "2026-02-30T10:00:00Z" })),
      js.publish(subject, envelope({ id: valid })),
    ]);
    await vi.waitFor(
      () => expect(bodies(receiver.at("/beside-malformed")).map((body) => body.id)).toEqual([valid]),
      { timeout: 10_000, interval: 100 },
    );
    // Terminated, not handed back: nothing is left for the consumer to take again.
    const jsm = await jetstreamManager(stack.nats);
    await vi.waitFor(
      async () => {
        const consumer = await jsm.consumers.info(stack.config.EVENTS_STREAM, "webhooks");
        expect({ pending: consumer.num_pending, acking: consumer.num_ack_pending }).toEqual({
          pending: 0,
          acking: 0,
        });
      },
      { timeout: 10_000, interval: 200 },
    );
  });

  it("pages deliveries newest first and filters by status and event type", async () => {
    const endpoint = await createEndpoint(api, tenant, { url: `${receiver.url}/paged`, event_types: ["*"] });
    for (let i = 0; i < 3; i++) {
      await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
        token: tenant.token,
        idempotencyKey: ik(),
      });
    }
    await vi.waitFor(() => expect(receiver.at("/paged")).toHaveLength(3), { timeout: 10_000, interval: 50 });
    const first = await api.get(`${tenant.env}/webhook-deliveries?endpoint_id=${endpoint.id}&limit=2`, {
      token: tenant.token,
    });
    expect(first.body.items).toHaveLength(2);
    const second = await api.get(
      `${tenant.env}/webhook-deliveries?endpoint_id=${endpoint.id}&limit=2&cursor=${first.body.next_cursor}`,
      { token: tenant.token },
    );
    expect(second.body).toMatchObject({ items: [expect.any(Object)], next_cursor: null });
    const all = [...first.body.items, ...second.body.items];
    expect(all.map((d) => d.created_at)).toEqual([...all.map((d) => d.created_at)].sort().reverse());
    const byType = (type: string) =>
      api.get(`${tenant.env}/webhook-deliveries?endpoint_id=${endpoint.id}&event_type=${type}`, {
        token: tenant.token,
      });
    expect((await byType("webhook.test")).body.items).toHaveLength(3);
    expect((await byType("subject.imported")).body.items).toEqual([]);
    const badStatus = await api.get(`${tenant.env}/webhook-deliveries?status=lost`, { token: tenant.token });
    expect(badStatus.body.detail[0]).toMatchObject({ loc: ["query", "status"], type: "enum" });
    const unknown = await api.get(`${tenant.env}/webhook-deliveries/${endpoint.id}`, { token: tenant.token });
    expect(expectError(unknown, 404, "not_found").context).toEqual({ resource: "webhook_delivery" });
  });
});
