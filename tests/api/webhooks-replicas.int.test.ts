import { setTimeout as sleep } from "node:timers/promises";
import { createLogger, createPool, type Pool } from "@evalp/kit";
import type { Receiver } from "@evalp/testing";
import { createWebhookWorkers, type WebhookWorkers } from "@evalp/webhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createTenant, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint, importSubjects } from "./support/webhooks.js";

// Two webhooks worker sets (as two replicas would run) against one database, one NATS stream and
// one receiver that fails every first attempt: each attempt must be sent exactly once.
const context = useStack({ WEBHOOK_RETRY_SCHEDULE_MS: "100,100", WEBHOOK_ALLOW_PRIVATE: "true" });
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
let replicaPool: Pool;
let replica: WebhookWorkers;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  receiver = await startCheckedReceiver(api);
  const seen = new Set<string>();
  // The first attempt of every event fails, the second succeeds.
  receiver.respond((request) => {
    const id = request.headers["webhook-id"] as string;
    if (seen.has(id)) return { status: 204 };
    seen.add(id);
    return { status: 500 };
  });
  replicaPool = createPool({ databaseUrl: stack.config.DATABASE_URL, schema: "webhooks", max: 4 });
  replica = createWebhookWorkers({
    pool: replicaPool,
    logger: createLogger("replica", "silent"),
    config: stack.config,
  });
  replica.start();
  await replica.connect(await stack.connectNats("webhooks"));
});
afterAll(async () => {
  await replica?.stop(0);
  await replicaPool?.end();
  await receiver?.close();
});

describe("two webhooks worker replicas", () => {
  it("send each attempt exactly once: 2 per event with one failure, none twice", async () => {
    await createEndpoint(api, tenant, { url: `${receiver.url}/replicas`, event_types: ["subject.imported"] });
    const batches = 40;
    for (let i = 0; i < batches; i++) await importSubjects(api, tenant, [`r-${i}`]);
    await vi.waitFor(
      () => {
        expect(receiver.requests.length).toBeGreaterThanOrEqual(batches * 2);
      },
      { timeout: 30_000, interval: 200 },
    );
    // Give a duplicate, if any, the time to arrive.
    await sleep(500);
    const perEvent = new Map<string, number>();
    for (const request of receiver.requests) {
      const id = request.headers["webhook-id"] as string;
      perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
    }
    expect(perEvent.size).toBe(batches);
    expect([...perEvent.values()].every((count) => count === 2)).toBe(true);
    const attempts = await stack
      .pool("webhooks")
      .query("SELECT count(*)::int AS n FROM webhook_delivery_attempts");
    expect(attempts.rows[0].n).toBe(batches * 2);
  });

  it("hear every endpoint change from the next event on, whichever replica consumes it", async () => {
    // Each replica keeps the environment's endpoints in memory once it consumed one of its events.
    const owner = await createTenant(api);
    const heard = (path: string) =>
      new Set(receiver.at(path).map((request) => request.headers["webhook-id"]));
    const importEach = async (round: string, count: number) => {
      for (let i = 0; i < count; i++) await importSubjects(api, owner, [`${round}-${i}`]);
    };
    const expectHeard = (counts: Record<string, number>) =>
      vi.waitFor(
        () => {
          for (const [path, count] of Object.entries(counts)) expect(heard(path).size, path).toBe(count);
        },
        { timeout: 20_000, interval: 100 },
      );
    const first = await createEndpoint(api, owner, { url: `${receiver.url}/set-first`, event_types: ["*"] });
    await importEach("warm", 6);
    await expectHeard({ "/set-first": 6 });

    // Created: heard from the next event.
    const second = await createEndpoint(api, owner, {
      url: `${receiver.url}/set-second`,
      event_types: ["*"],
    });
    await importEach("created", 6);
    await expectHeard({ "/set-first": 12, "/set-second": 6 });

    // Disabled, and deleted: no longer heard; a third, created with the deletion, heard at once.
    const disabled = await api.patch(
      `${owner.env}/webhooks/${first.id}`,
      { enabled: false },
      { token: owner.token, idempotencyKey: ik() },
    );
    expect(disabled.status).toBe(200);
    const deleted = await api.call("DELETE", `${owner.env}/webhooks/${second.id}`, undefined, {
      token: owner.token,
      idempotencyKey: ik(),
    });
    expect(deleted.status).toBe(204);
    await createEndpoint(api, owner, { url: `${receiver.url}/set-third`, event_types: ["subject.imported"] });
    await importEach("changed", 6);
    await expectHeard({ "/set-third": 6 });
    // Give a delivery to a stopped endpoint, if any, the time to arrive.
    await sleep(500);
    await expectHeard({ "/set-first": 12, "/set-second": 6, "/set-third": 6 });
  });
});
