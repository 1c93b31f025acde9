import { setTimeout as sleep } from "node:timers/promises";
import { expect, vi } from "vitest";
import { type ApiClient, apiClient } from "../../api/support/client.js";
import { createKey, createTenant, type Tenant } from "../../api/support/fixtures.js";
import { type PlatformProcesses, startProcesses } from "../../api/support/processes.js";
import { type Probe, type Sample, startLoad, watchReadiness } from "./fault-load.js";

/** No request may take longer than this, failover or not. */
export const BOUND_MS = 5_000;
/** Requests a minute one client address may send: what the probing client runs into. */
export const ADDRESS_LIMIT = 60;
/** The address the rate-limit probe sends from (X-Forwarded-For, the gateway trusting its peer). */
export const PROBE_ADDRESS = "203.0.113.9";
/**
 * The rate-limit bound stated in docs/operations.md: across one failover an address is admitted
 * at most twice its limit in a window (the window lost with the old primary, counted anew on the
 * new one), besides what passed uncounted while no primary answered (the limiter fails open).
 */
export const WINDOWS_PER_FAILOVER = 2;
/** The gateway serves keyed writes again within this long of the primary's death. */
export const RECOVERY_BOUND_MS = 15_000;
const CLIENTS = 4;
const REQUEST_TIMEOUT_MS = 5_000;
/** The lock's lifetime (the gateway's lockTtlMs) and a margin. */
const LOCK_LAPSED_MS = REQUEST_TIMEOUT_MS + 5_000 + 3_000;

/** A client address of the load, a different one for each request, so the load never meets a limit. */
const anyAddress = () =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

export type FailoverSetup = { platform: PlatformProcesses; api: ApiClient; tenant: Tenant; apiKey: string };

/** The platform as `npm start` runs it, on the Redis `redisUrl` names, the gateway trusting its peer's X-Forwarded-For. */
export async function startOnRedis(redisUrl: string): Promise<FailoverSetup> {
  const platform = await startProcesses({
    // Five processes starting at once on a busy machine can take longer than the default.
    startTimeoutMs: 90_000,

    env: {
      REDIS_URL: redisUrl,
      RATE_LIMIT_PER_MINUTE: "1000000",
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: String(ADDRESS_LIMIT),
      TRUSTED_PROXIES: "127.0.0.1",
      // An Idempotency-Key's lock lives REQUEST_TIMEOUT_MS + 5 s: short, so that a lock the
      // failover left behind (taken on the old primary, never released) lapses within the test.
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      UPSTREAM_TIMEOUT_MS: "4000",
    },
  });
  const api = apiClient(platform.url);
  const tenant = await createTenant(api);
  const apiKey = (await createKey(api, tenant, ["subjects:write", "org:read"])).secret;
  return { platform, api, tenant, apiKey };
}

type ProbeSample = { at: number; status: number; counted: boolean };

/** GETs of the app from PROBE_ADDRESS, one at a time, until stopped. */
function probeRateLimit(setup: FailoverSetup) {
  const samples: ProbeSample[] = [];
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      const at = Date.now();
      try {
        const response = await fetch(`${setup.platform.url}${setup.tenant.app}`, {
          headers: { "x-api-key": setup.apiKey, "x-forwarded-for": PROBE_ADDRESS },
          signal: AbortSignal.timeout(BOUND_MS),
        });
        await response.arrayBuffer();
        // Counted: the limiter answered with the address's window (Redis reached).
        samples.push({ at, status: response.status, counted: response.headers.has("ratelimit-limit") });
      } catch {
        samples.push({ at, status: 0, counted: false });
      }
      await sleep(15);
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

export type FailoverRun = {
  /** When the primary was killed, the topology had promoted another, the gateway wrote again. */
  killedAt: number;
  promotedAt: number;
  /** The first keyed write acknowledged that was sent after the kill. */
  writingAt: number;
  /** `/readyz` said `ready` again (after any `degraded`). */
  readyAt: number;
  samples: Sample[];
  probes: ProbeSample[];
  summary: string;
};

/**
 * Load (idempotent writes and reads from ever-changing addresses) and a rate-limit probe from one
 * address, through the gateway; `kill` takes the primary away and `promoted` waits until the
 * topology has another. Then checks what a failover must leave true: every request answered within
 * the bound with a 2xx or a 503 `unavailable` (a 429 for the probe), writes acknowledged again
 * within RECOVERY_BOUND_MS, every acknowledged write replayed (same key, same body) with the same
 * batch — from Redis's record or, where the failover lost it, from the plane's — and never run
 * twice, and the probe's address admitted no more than WINDOWS_PER_FAILOVER windows' worth.
 */
export async function failoverUnderLoad(
  setup: FailoverSetup,
  label: string,
  primary: { kill(): Promise<void>; promoted(): Promise<void> },
): Promise<FailoverRun> {
  const { platform, tenant, apiKey } = setup;
  await platform.ready();
  const readiness = watchReadiness(platform.opsUrl("gateway"), BOUND_MS);
  const load = startLoad({
    url: platform.url,
    env: tenant.env,
    app: tenant.app,
    apiKey,
    clients: CLIENTS,
    label,
    boundMs: BOUND_MS,
    headers: () => ({ "x-forwarded-for": anyAddress() }),
  });
  const probe = probeRateLimit(setup);
  const waitFor = (what: string, check: () => boolean, timeout = 20_000) =>
    vi.waitFor(() => expect(check(), what).toBe(true), { timeout, interval: 20 });
  let killedAt = 0;
  let promotedAt = 0;
  try {
    await waitFor(
      "traffic flows and the probe is refused before the failover",
      () => load.writes.length >= CLIENTS && probe.samples.some((sample) => sample.status === 429),
    );
    killedAt = Date.now();
    await primary.kill();
    await primary.promoted();
    promotedAt = Date.now();
    await waitFor(
      "every client writes again after the failover",
      () =>
        new Set(
          load.writes
            .filter((write) => write.startedAt > killedAt)
            .map((write) => write.externalId.split("-")[1]),
        ).size >= CLIENTS,
      RECOVERY_BOUND_MS + 10_000,
    );
    await waitFor("/readyz says ready after the failover", () =>
      readiness.probes.some((probe) => probe.at > promotedAt && probe.state === "ready"),
    );
    // A little more load on the new primary, and the probe refused there too.
    await waitFor("the probe refused after the failover", () =>
      probe.samples.some((sample) => sample.at > promotedAt && sample.status === 429),
    );
  } catch (error) {
    // A wait that failed ends the test before the summary below: what the load saw after the kill
    // is what tells a slow failover from a client stuck on one key.
    const waited = String(error).split("\n")[0];
    console.info(`${label}: ${waited}; ${afterKill(load.samples, readiness.probes, killedAt)}`);
    throw error;
  } finally {
    await load.stop();
    await probe.stop();
    await readiness.stop();
  }
  const writingAt = Math.min(
    ...load.writes.filter((write) => write.startedAt > killedAt).map((write) => write.endedAt),
  );
  const lastDegraded = readiness.probes
    .filter((probe) => probe.at > killedAt && probe.state !== "ready")
    .at(-1);
  const readyAt =
    readiness.probes.find((probe) => probe.at > (lastDegraded?.at ?? killedAt) && probe.state === "ready")
      ?.at ?? 0;
  const statuses: Record<string, number> = {};
  for (const sample of load.samples) statuses[sample.status] = (statuses[sample.status] ?? 0) + 1;
  const probeStatuses: Record<string, number> = {};
  for (const sample of probe.samples) probeStatuses[sample.status] = (probeStatuses[sample.status] ?? 0) + 1;
  const summary =
    `${label}: promoted ${promotedAt - killedAt} ms after the kill, keyed writes acknowledged again after ` +
    `${writingAt - killedAt} ms, /readyz ${readiness.transitions().join("→")} (ready ${readyAt - killedAt} ms after the kill); ` +
    `load ${load.samples.length} requests ${JSON.stringify(statuses)}, ${load.writes.length} writes acknowledged; ` +
    `probe ${probe.samples.length} requests ${JSON.stringify(probeStatuses)}, ` +
    `${probe.samples.filter((sample) => sample.status === 200 && sample.counted).length} admitted counted, ` +
    `${probe.samples.filter((sample) => sample.status === 200 && !sample.counted).length} admitted uncounted`;
  console.info(summary);

  const describe = (sample: Sample) =>
    `${sample.route} → ${sample.status} in ${Math.round(sample.ms)} ms ${sample.error ?? JSON.stringify(sample.body)}`;
  expect(load.samples.filter((sample) => sample.status === 0 || sample.ms > BOUND_MS).map(describe)).toEqual(
    [],
  );
  expect(
    load.samples
      .filter((sample) => !(sample.status >= 200 && sample.status < 300) && sample.status !== 503)
      .map(describe),
    "answers other than 2xx and 503",
  ).toEqual([]);
  for (const sample of load.samples.filter((sample) => sample.status === 503)) {
    expect((sample.body as { detail?: { code?: string } }).detail?.code, describe(sample)).toBe(
      "unavailable",
    );
  }
  expect(probe.samples.filter((sample) => ![200, 429, 503].includes(sample.status))).toEqual([]);
  expect(writingAt - killedAt, "keyed writes acknowledged again").toBeLessThan(RECOVERY_BOUND_MS);
  expect(readyAt, "/readyz ready again").toBeGreaterThan(killedAt);
  expect(readyAt - killedAt).toBeLessThan(RECOVERY_BOUND_MS);

  // The rate limit held: the probe's address admitted at most WINDOWS_PER_FAILOVER windows' worth
  // of counted requests (all within one minute's window).
  expect(probe.samples.at(-1)?.at ?? 0).toBeLessThan((probe.samples[0]?.at ?? 0) + 60_000);
  const admitted = probe.samples.filter((sample) => sample.status === 200 && sample.counted).length;
  expect(admitted).toBeGreaterThanOrEqual(ADDRESS_LIMIT);
  expect(admitted).toBeLessThanOrEqual(WINDOWS_PER_FAILOVER * ADDRESS_LIMIT);

  const locked = await expectRunOnce(setup, load.writes);
  console.info(
    `${label}: ${load.writes.length} acknowledged writes sent again, same batch each; ${locked} found locked by the failover until the lock lapsed`,
  );
  return {
    killedAt,
    promotedAt,
    writingAt,
    readyAt,
    samples: load.samples,
    probes: probe.samples,
    summary,
  };
}

/**
 * Every acknowledged write sent again with its key and body answers the same batch: a replay,
 * where a second run would have made a batch of its own. No keyed write ran twice, whether Redis
 * still held its record after the failover or the plane answered from its own. A key whose lock
 * the failover left behind (taken on the old primary, replicated, never released: its answer was
 * not stored) answers 409 `idempotency_key_in_use` until the lock lapses, and is asked again
 * then, as a client told Retry-After would (and after a 503, as after any 5xx). Returns how many
 * keys were found locked.
 */
async function expectRunOnce(
  setup: FailoverSetup,
  writes: Array<{ key: string; body: unknown; externalId: string; batchId: string }>,
): Promise<number> {
  const { platform, tenant, apiKey } = setup;
  const api = apiClient(platform.url);
  const pending = [...writes];
  const differing: string[] = [];
  let locked = 0;
  let unavailable = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let write = pending.pop(); write; write = pending.pop()) {
        const deadline = Date.now() + LOCK_LAPSED_MS;
        const send = () =>
          api.post(`${tenant.env}/subjects/batch`, write.body, {
            apiKey,
            idempotencyKey: write.key,
            headers: { "x-forwarded-for": anyAddress() },
          });
        let again = await send();
        const inUse = () => again.status === 409 && again.body.detail?.code === "idempotency_key_in_use";
        if (inUse()) locked += 1;
        if (again.status === 503) unavailable += 1;
        // Told to wait (a lock left behind) or to retry (503 while the client reconnects), a
        // client sends the same key and body again.
        while ((inUse() || again.status === 503) && Date.now() < deadline) {
          await new Promise((resolve) =>
            setTimeout(resolve, 1_000 * Number(again.headers.get("retry-after") ?? 1)),
          );
          again = await send();
        }
        if (again.status !== 200 && again.status !== 201)
          differing.push(`${write.externalId}: ${again.status} ${again.text}`);
        else if (again.body.batch_id !== write.batchId)
          differing.push(`${write.externalId}: batch ${again.body.batch_id}, first ${write.batchId}`);
      }
    }),
  );
  expect(differing, "writes sent again with their key").toEqual([]);
  expect(writes.length).toBeGreaterThan(0);
  if (unavailable > 0) console.info(`${unavailable} writes sent again answered 503 first, then their batch`);
  return locked;
}

/**
 * The answers after `killedAt`, counted by route, status and error code, in the order each first
 * came, with when (ms after the kill) each kind was first and last seen; and `/readyz`'s states.
 */
function afterKill(samples: Sample[], probes: Probe[], killedAt: number): string {
  const kinds = new Map<string, { count: number; first: number; last: number }>();
  for (const sample of samples.filter((sample) => sample.startedAt > killedAt)) {
    const code = (sample.body as { detail?: { code?: string } } | null)?.detail?.code ?? sample.error ?? "";
    const kind = `${sample.route} ${sample.status} ${code}`.trim();
    const at = sample.startedAt - killedAt;
    const seen = kinds.get(kind);
    if (seen) {
      seen.count += 1;
      seen.last = at;
    } else kinds.set(kind, { count: 1, first: at, last: at });
  }
  const answers = [...kinds].map(
    ([kind, { count, first, last }]) => `${kind} ×${count} (${first}–${last} ms)`,
  );
  const states: string[] = [];
  let previous = "";
  for (const probe of probes.filter((probe) => probe.at > killedAt)) {
    const state = probe.status === 200 ? probe.state : String(probe.status);
    const failing = probe.failing.length ? ` [${probe.failing.join(", ")}]` : "";
    if (`${state}${failing}` !== previous) states.push(`${state}${failing} at ${probe.at - killedAt} ms`);
    previous = `${state}${failing}`;
  }
  return `after the kill: ${answers.join("; ")}; /readyz ${states.join(" → ")}`;
}
