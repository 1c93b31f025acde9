import { setTimeout as sleep } from "node:timers/promises";
import { createPool, ensureDatabase, migrate } from "@evalp/kit";
import {
  type Receiver,
  startPostgresServer,
  startReceiver,
  startRedisServer,
  type TestPostgresServer,
  type TestRedisServer,
} from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "../api/support/client.js";
import { createKey, createTenant, type Tenant } from "../api/support/fixtures.js";
import {
  type PlatformProcesses,
  type ProcessName,
  SERVICES,
  startProcesses,
} from "../api/support/processes.js";
import { MIGRATIONS } from "../api/support/stack.js";
import { createEndpoint } from "../api/support/webhooks.js";
import {
  type Load,
  type ReadinessWatch,
  type Sample,
  startLoad,
  watchReadiness,
} from "./support/fault-load.js";

/**
 * The platform's dependencies failing under load (docs/errors.md `unavailable`, docs/webhooks.md nothing lost):
 * Postgres restarted, Redis stopped and started, NATS restarted, each while clients keep
 * reading and writing. The servers are this file's own (the machine's shared ones serve other
 * tests); the platform runs as the five processes `npm start` runs.
 */

/** No request may take longer than this, fault or not: a client must be told, not kept waiting. */
const BOUND_MS = 5_000;
/** How long each dependency stays down. */
const OUTAGE_MS = 2_500;
const CLIENTS = 4;
/** The median time to a 503 while a dependency is down. */
const FAST_FAILURE_MS = 250;

let postgres: TestPostgresServer | undefined;
let redis: TestRedisServer | undefined;
let receiver: Receiver | undefined;
let platform: PlatformProcesses | undefined;
let databaseUrl = "";
let api: ApiClient;
let tenant: Tenant;
let apiKey = "";

beforeAll(async () => {
  // NATS: the processes' own server (startProcesses), stopped and started below.
  [postgres, redis, receiver] = await Promise.all([
    startPostgresServer(),
    startRedisServer(),
    startReceiver(),
  ]);
  const url = new URL(postgres.url);
  url.pathname = "/evalp";
  databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl, MIGRATIONS);
  platform = await startProcesses({
    databaseUrl,
    env: {
      REDIS_URL: redis.url,
      DATABASE_POOL_SIZE: "5",
      RATE_LIMIT_PER_MINUTE: "1000000",
      WEBHOOK_ALLOW_PRIVATE: "true",
      // A lease outlives an attempt by 5 s: an attempt whose outcome could not be recorded while
      // Postgres was down is made again soon.
      WEBHOOK_TIMEOUT_MS: "2000",
    },
  });
  api = apiClient(platform.url);
  tenant = await createTenant(api);
  apiKey = (await createKey(api, tenant, ["subjects:write", "org:read"])).secret;
  await createEndpoint(api, tenant, { url: `${receiver.url}/events`, event_types: ["subject.imported"] });
});

afterAll(async () => {
  await platform?.close();
  await receiver?.close();
  await redis?.close();
  await postgres?.close();
});

/** One query in the control schema, on a pool of its own made after the restarts. */
async function query<T extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const pool = createPool({ databaseUrl, schema: "control", max: 1 });
  try {
    return (await pool.query(sql, params)).rows as T[];
  } finally {
    await pool.end();
  }
}

type Run = { load: Load; readiness: ReadinessWatch; downAt: number; upAt: number; readyAt: number };

/**
 * Runs the load and a readiness probe around one fault: traffic flows, the dependency goes down
 * (until the probed `/readyz` says `degraded`, naming `missing`, and the outage has lasted
 * OUTAGE_MS), comes back, and traffic flows again (once the gateway is `ready`, every client has
 * a write acknowledged). `probed` is the process whose readiness shows the fault: the gateway,
 * or a service that serves on without the dependency.
 */
async function underFault(
  label: string,
  fault: { down(): Promise<void>; up(): Promise<void>; probed: ProcessName; missing: string },
): Promise<Run> {
  const running = platform;
  if (!running) throw new Error("platform not started");
  await running.ready();
  const readiness = watchReadiness(running.opsUrl(fault.probed), BOUND_MS);
  const load = startLoad({
    url: running.url,
    env: tenant.env,
    app: tenant.app,
    apiKey,
    clients: CLIENTS,
    label,
    boundMs: BOUND_MS,
  });
  let down = false;
  const waitFor = (what: string, check: () => boolean) =>
    vi.waitFor(() => expect(check(), what).toBe(true), { timeout: 10_000, interval: 20 });
  try {
    await waitFor("traffic flows before the fault", () => load.writes.length >= CLIENTS);
    const downAt = Date.now();
    down = true;
    await fault.down();
    await waitFor(`/readyz says degraded, without ${fault.missing}, during the outage`, () =>
      readiness.probes.some(
        (probe) => probe.at >= downAt && probe.state === "degraded" && probe.failing.includes(fault.missing),
      ),
    );
    const left = downAt + OUTAGE_MS - Date.now();
    if (left > 0) await sleep(left);
    const upAt = Date.now();
    down = false;
    await fault.up();
    await running.ready(15_000).catch((error: Error) => {
      const exited = [...SERVICES, "gateway" as const].filter((name) => !running.child(name));
      throw new Error(
        `${error.message}; exited: ${exited.join(", ") || "none"}\n${running.stderr.join("")}\n${running.logTail()}`,
      );
    });
    const readyAt = Date.now();
    await waitFor("/readyz says ready after the outage", () =>
      readiness.probes.some((probe) => probe.at >= readyAt && probe.state === "ready"),
    );
    await waitFor(
      "every client writes again after the outage",
      () => load.writes.filter((write) => write.startedAt >= readyAt).length >= CLIENTS,
    );
    return { load, readiness, downAt, upAt, readyAt };
  } finally {
    // A failed run still brings its dependency back, so that the next fault starts healthy.
    if (down) await fault.up().catch(() => {});
    await load.stop();
    await readiness.stop();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const describeSample = (sample: Sample) =>
  `${sample.route} → ${sample.status} in ${Math.round(sample.ms)} ms ${sample.error ?? JSON.stringify(sample.body)}`;

/**
 * What every fault must leave true of what the clients saw: each request answered within the
 * bound, with a 2xx or a 503 `unavailable` in the contract's envelope with `Retry-After`;
 * `/readyz` 200 throughout (a balancer keeps the process), `ready` before, `degraded` during,
 * `ready` after. 409 `idempotency_key_in_use` is not allowed: a
 * client sends a key again only after the previous request with it was answered, and an answer
 * releases the lock, so a 409 would mean a lock left behind.
 */
function expectAnsweredWell(run: Run, options: { unavailableSeen: boolean }) {
  const { samples } = run.load;
  const slow = samples.filter((sample) => sample.status === 0 || sample.ms > BOUND_MS);
  expect(slow.map(describeSample), "requests without an answer within the bound").toEqual([]);
  const unexpected = samples.filter(
    (sample) => !(sample.status >= 200 && sample.status < 300) && sample.status !== 503,
  );
  expect(unexpected.map(describeSample), "answers other than 2xx and 503").toEqual([]);
  const unavailable = samples.filter((sample) => sample.status === 503);
  for (const sample of unavailable) {
    const body = sample.body as { detail?: Record<string, unknown> };
    expect(Object.keys(body ?? {}), describeSample(sample)).toEqual(["detail"]);
    expect(body.detail, describeSample(sample)).toEqual({
      code: "unavailable",
      message: expect.any(String),
      context: {},
      request_id: sample.requestId,
    });
    expect(sample.retryAfter, describeSample(sample)).toMatch(/^[1-9][0-9]*$/);
  }
  if (options.unavailableSeen) expect(unavailable.length, "503s during the outage").toBeGreaterThan(0);
  // A dependency known to be down is not waited for: the typical 503 is immediate, not the
  // length of a timeout or a reconnection attempt.
  if (unavailable.length > 0)
    expect(median(unavailable.map((sample) => sample.ms)), "median time to a 503").toBeLessThan(
      FAST_FAILURE_MS,
    );

  const probes = run.readiness.probes;
  expect(probes.filter((probe) => probe.status === 0 || probe.ms > BOUND_MS)).toEqual([]);
  const transitions = run.readiness.transitions();
  expect(transitions[0]).toBe("ready");
  expect(transitions).toContain("degraded");
  expect(transitions.at(-1)).toBe("ready");
  expect(transitions.filter((state) => state !== "ready" && state !== "degraded")).toEqual([]);
  // Once the dependency answered again, readiness settled: not degraded after the first ready that followed.
  const back = probes.findIndex((probe) => probe.at >= run.upAt && probe.state === "ready");
  expect(back).toBeGreaterThan(-1);
  expect(probes.slice(back).filter((probe) => probe.state !== "ready")).toEqual([]);

  // No process died of the fault.
  for (const name of [...SERVICES, "gateway"] as ProcessName[]) {
    expect(
      platform?.child(name),
      `${name} still running\n${platform?.stderr.join("")}\n${platform?.logTail()}`,
    ).not.toBeNull();
  }
}

/** Every acknowledged write reads back through the API and is in the database. */
async function expectDurable(run: Run) {
  const { writes } = run.load;
  const pending = [...writes];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let write = pending.pop(); write; write = pending.pop()) {
        const got = await api.get(`${tenant.env}/subjects/${write.subjectId}`, { apiKey });
        if (got.status !== 200 || got.body.external_id !== write.externalId) {
          failures.push(`${write.externalId}: ${got.status} ${got.text}`);
        }
      }
    }),
  );
  expect(failures).toEqual([]);
  const stored = await query<{ id: string; external_id: string }>(
    "SELECT id, external_id FROM subjects WHERE id = ANY($1::uuid[])",
    [writes.map((write) => write.subjectId)],
  );
  const byId = new Map(stored.map((row) => [row.id, row.external_id]));
  expect(writes.filter((write) => byId.get(write.subjectId) !== write.externalId)).toEqual([]);
}

function summary(label: string, run: Run): string {
  const statuses: Record<string, number> = {};
  for (const sample of run.load.samples) statuses[sample.status] = (statuses[sample.status] ?? 0) + 1;
  const max = Math.max(...run.load.samples.map((sample) => sample.ms));
  const firstDown = run.readiness.probes.find(
    (probe) => probe.at >= run.downAt && probe.state === "degraded",
  );
  const during = run.load.writes.filter(
    (write) => write.startedAt >= run.downAt && write.endedAt <= run.upAt,
  );
  return (
    `${label}: ${run.load.samples.length} requests ${JSON.stringify(statuses)}, max ${Math.round(max)} ms; ` +
    `readyz ${run.readiness.transitions().join("→")} (degraded after ${firstDown ? firstDown.at - run.downAt : "?"} ms ` +
    `[${firstDown?.failing.join(",")}], ready again ${run.readyAt - run.upAt} ms after the restart); ` +
    `${run.load.writes.length} writes acknowledged, ${during.length} during the outage`
  );
}

describe("dependency faults under load", () => {
  // A clean restart (every session ended with 57P01) and a crash (sessions cut, crash recovery
  // at start): either can catch a connection between two queries of a transaction.
  for (const mode of ["fast", "immediate"] as const) {
    it(`Postgres stopped (${mode}) and started: 503 unavailable meanwhile, the gateway stays ready and says degraded, acknowledged writes kept`, async () => {
      const run = await underFault(`pg-${mode}`, {
        down: () => postgres?.stop(mode) ?? Promise.resolve(),
        up: () => postgres?.start() ?? Promise.resolve(),
        // Every plane needs its database: the gateway serves on (what needs no plane) and names them.
        probed: "gateway",
        missing: "control",
      });
      console.info(summary(`postgres (${mode})`, run));
      expectAnsweredWell(run, { unavailableSeen: true });
      await expectDurable(run);
    });
  }

  it("Redis stopped and started: writes 503 (idempotency cannot be kept), reads pass, the gateway stays ready and says degraded", async () => {
    const run = await underFault("redis", {
      down: () => redis?.stop("SIGKILL") ?? Promise.resolve(),
      up: () => redis?.start() ?? Promise.resolve(),
      probed: "gateway",
      missing: "redis",
    });
    console.info(summary("redis", run));
    expectAnsweredWell(run, { unavailableSeen: true });
    // Reads do not need Redis (the rate limit lets them through): they keep answering 200.
    const downReads = run.load.samples.filter(
      (sample) => sample.kind === "read" && sample.startedAt >= run.downAt && sample.startedAt < run.upAt,
    );
    expect(downReads.length).toBeGreaterThan(0);
    expect(downReads.filter((sample) => sample.status !== 200).map(describeSample)).toEqual([]);
    await expectDurable(run);
  });

  it("NATS restarted: the API keeps answering, and events emitted meanwhile are delivered after", async () => {
    const run = await underFault("nats", {
      down: () => platform?.nats.stop("SIGKILL") ?? Promise.resolve(),
      up: () => platform?.nats.start() ?? Promise.resolve(),
      // The webhooks plane consumes the stream: it says what it misses and keeps serving.
      probed: "webhooks",
      missing: "nats",
    });
    console.info(summary("nats", run));
    expectAnsweredWell(run, { unavailableSeen: false });
    await expectDurable(run);

    // Subjects imported while NATS was down: their `subject.imported` events waited in the
    // outbox and reached the receiver only after NATS was back.
    const during = run.load.writes.filter(
      (write) => write.startedAt >= run.downAt && write.endedAt <= run.upAt,
    );
    expect(during.length).toBeGreaterThan(0);
    const arrivals = () => {
      const byBatch = new Map<string, number>();
      for (const request of receiver?.requests ?? []) {
        const event = JSON.parse(request.body) as { data: { batch_id: string } };
        if (!byBatch.has(event.data.batch_id)) byBatch.set(event.data.batch_id, request.receivedAt);
      }
      return byBatch;
    };
    await vi.waitFor(
      () => {
        const arrived = arrivals();
        expect(
          during.filter((write) => !arrived.has(write.batchId)).map((write) => write.externalId),
        ).toEqual([]);
      },
      { timeout: 15_000, interval: 100 },
    );
    const arrived = arrivals();
    expect(during.filter((write) => (arrived.get(write.batchId) ?? 0) < run.upAt)).toEqual([]);
  });

  it("delivers every event committed across the faults to the receiver, at least once", async () => {
    const committed = await query<{ id: string }>(
      "SELECT id FROM outbox WHERE event_type = 'subject.imported'",
    );
    expect(committed.length).toBeGreaterThan(0);
    const missing = () => {
      const seen = new Set((receiver?.requests ?? []).map((request) => request.headers["webhook-id"]));
      return committed.filter((row) => !seen.has(row.id)).map((row) => row.id);
    };
    await vi.waitFor(() => expect(missing()).toEqual([]), { timeout: 15_000, interval: 100 });
  });
});
