import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createPool, type Pool } from "@evalp/kit";
import {
  createTestDatabase,
  freePort,
  natsAuthorization,
  processIdentities,
  type Receiver,
  startNatsServer,
  startReceiver,
  type TestDatabase,
  type TestNatsServer,
  uniqueRedisPrefix,
  uniqueSuffix,
} from "@evalp/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { apiClient } from "./support/client.js";
import { checkEvents, loadEventCatalog } from "./support/event-catalog.js";
import { createTenant, ik } from "./support/fixtures.js";
import { MIGRATIONS, streamNames } from "./support/stack.js";
import { createEndpoint } from "./support/webhooks.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const EVENTS = 1_000;
const CONCURRENCY = 6;

let database: TestDatabase | undefined;
let nats: TestNatsServer | undefined;
let receiver: Receiver | undefined;
let controlDb: Pool | undefined;
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await controlDb?.end();
  await receiver?.close();
  await nats?.close();
  await database?.drop();
});

describe("the event path under faults (docs/webhooks.md: nothing is lost if any one process dies)", () => {
  it("delivers all of 1,000 events while webhooks is SIGKILLed and restarted twice and NATS restarted once", async () => {
    database = await createTestDatabase(MIGRATIONS);
    const names = streamNames(uniqueSuffix());
    // Production's NATS users and permissions: each process connects as itself.
    const authorization = natsAuthorization(names);
    nats = await startNatsServer({ authorization });
    receiver = await startReceiver();
    const ports = {
      control: { rpc: await freePort(), ops: await freePort() },
      webhooks: { rpc: await freePort(), ops: await freePort() },
      gateway: { rpc: await freePort(), ops: await freePort() },
    };
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      DATABASE_URL: database.url,
      REDIS_KEY_PREFIX: uniqueRedisPrefix(),
      JWT_SECRET: "fault-test-secret-fault-test-secret-0123456",
      NATS_URL: nats.url,
      ...names,
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_TIMEOUT_MS: "2000",
      RATE_LIMIT_PER_MINUTE: "100000",
      CONTROL_URL: `http://127.0.0.1:${ports.control.rpc}`,
      WEBHOOKS_URL: `http://127.0.0.1:${ports.webhooks.rpc}`,
    };
    const identities = processIdentities(database.url);
    const stderr: string[] = [];
    const start = (name: "control" | "webhooks" | "gateway") => {
      const own =
        name === "gateway"
          ? { PORT: String(ports.gateway.rpc), OPS_PORT: String(ports.gateway.ops) }
          : { SERVICE_PORT: String(ports[name].rpc), OPS_PORT: String(ports[name].ops) };
      const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
        cwd: ROOT,
        env: { ...env, ...identities.env(name), ...own, ...authorization.credentials(name) },
        stdio: ["ignore", "ignore", "pipe"],
      });
      children.add(child);
      child.stderr?.on("data", (chunk: Buffer) => stderr.push(`${name}: ${chunk.toString()}`));
      return child;
    };
    const ready = (url: string) =>
      vi.waitFor(
        async () => {
          const answer = await fetch(url).catch(() => null);
          expect(answer?.status).toBe(200);
        },
        { timeout: 20_000, interval: 100 },
      );
    const kill = async (child: ChildProcess) => {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
      children.delete(child);
    };

    start("control");
    let webhooks = start("webhooks");
    const gateway = start("gateway");
    await ready(`http://127.0.0.1:${ports.gateway.ops}/healthz`);
    await ready(`http://127.0.0.1:${ports.control.ops}/readyz`);
    await ready(`http://127.0.0.1:${ports.webhooks.ops}/readyz`);

    const api = apiClient(`http://127.0.0.1:${ports.gateway.rpc}`);
    checkEvents(receiver, await loadEventCatalog(api));
    const tenant = await createTenant(api);
    await createEndpoint(api, tenant, { url: `${receiver.url}/all`, event_types: ["subject.imported"] });

    // The emitter: one subject import (one `subject.imported` event) per request, a few at a time.
    let emitted = 0;
    const failures: string[] = [];
    const emit = async () => {
      while (emitted < EVENTS) {
        const n = emitted++;
        const answer = await api.post(
          `${tenant.env}/subjects/batch`,
          { items: [{ external_id: `fault-${n}`, identity_mode: "anonymous", profile: { n } }] },
          { token: tenant.token, idempotencyKey: ik() },
        );
        if (answer.status !== 200) failures.push(`${n}: ${answer.status}`);
        await sleep(15);
      }
    };
    const emitting = Promise.all(Array.from({ length: CONCURRENCY }, emit));
    const reached = (count: number) =>
      vi.waitFor(() => expect(emitted).toBeGreaterThanOrEqual(count), { timeout: 60_000, interval: 10 });

    // The faults, while events keep coming.
    await reached(150);
    await kill(webhooks);
    await reached(250);
    webhooks = start("webhooks");
    await reached(450);
    await nats.stop("SIGTERM");
    await reached(550);
    await nats.start();
    await reached(750);
    await kill(webhooks);
    await reached(850);
    webhooks = start("webhooks");
    await emitting;
    expect(failures).toEqual([]);

    // Every event committed in control's outbox reached the receiver at least once.
    controlDb = createPool({ databaseUrl: database.url, schema: "control", max: 2 });
    const committed = await controlDb.query<{ id: string }>(
      "SELECT id FROM outbox WHERE event_type = 'subject.imported'",
    );
    expect(committed.rows).toHaveLength(EVENTS);
    const expected = new Set(committed.rows.map((row) => row.id));
    const missing = () => {
      const seen = new Set((receiver?.requests ?? []).map((request) => request.headers["webhook-id"]));
      return [...expected].filter((id) => !seen.has(id));
    };
    await vi.waitFor(() => expect(missing()).toEqual([]), { timeout: 60_000, interval: 250 });
    const ids = receiver.requests.map((request) => request.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(EVENTS);
    console.info(
      `fault test: ${EVENTS} events, ${ids.length} requests received (${ids.length - EVENTS} duplicates absorbed by webhook-id)`,
    );

    for (const child of [webhooks, gateway]) child.kill("SIGTERM");
    expect(stderr.filter((line) => /"level":(5|6)0/.test(line))).toEqual([]);
  }, 120_000);
});
