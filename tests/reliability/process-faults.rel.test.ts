import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "../api/support/client.js";
import { expectError, ik } from "../api/support/fixtures.js";
import {
  type PlatformProcesses,
  type ProcessName,
  SERVICES,
  startProcesses,
} from "../api/support/processes.js";
import { attempt, type Outcome, runClients } from "./support/load-clients.js";
import { prepareWorkload, WORKLOAD_OPS, type Workload, type WorkloadOp } from "./support/load-workload.js";

/** How long a client waits for any answer; an outage must be answered well within it. */
const BOUND_MS = 5_000;
/** An unreachable plane is known at once (connection refused): its 503 must not take long. */
const PROMPT_MS = 1_000;
/** docs/configuration.md: a process finishes what it has within 10 s of SIGTERM and exits 0. */
const DRAIN_DEADLINE_MS = 10_000;

let platform: PlatformProcesses;
let api: ApiClient;
let work: Workload;

beforeAll(async () => {
  platform = await startProcesses({
    // Thousands of requests from one key in a minute are this test's load, not abuse; a larger
    // pool lets every held write of the drain test wait inside its transaction at once.
    env: { RATE_LIMIT_PER_MINUTE: "1000000", DATABASE_POOL_SIZE: "20" },
  });
  api = apiClient(platform.url);
  work = await prepareWorkload(api);
});

afterAll(async () => {
  await platform?.close();
});

const ops = (): WorkloadOp[] => WORKLOAD_OPS.map((name) => work.ops[name]);
const byName = (name: string) => work.ops[name as keyof Workload["ops"]];
const describeOutcome = (o: Outcome) =>
  `${o.op} ${o.status ?? o.error} after ${o.endedAt - o.startedAt} ms ${o.response?.text.slice(0, 200) ?? ""}`;

/** Reads back every write that was answered 2xx: an acknowledged write is never lost. */
async function expectDurable(outcomes: Outcome[]): Promise<number> {
  const written = outcomes.filter((o) => o.status !== null && o.status < 300 && byName(o.op).readBack);
  for (const outcome of written) {
    const back = await byName(outcome.op).readBack!(outcome.response!);
    expect(back.status, `${outcome.op} answered ${outcome.status} but reads back ${back.text}`).toBe(200);
  }
  return written.length;
}

describe("SIGKILL under load", () => {
  for (const victim of [...SERVICES, "gateway"] as ProcessName[]) {
    it(`of ${victim}: 503 unavailable while it is down, nothing else fails, served again after a restart, no acknowledged write lost`, async () => {
      const mix = ops();
      let turn = 0;
      const load = runClients({ clients: 4, timeoutMs: BOUND_MS, next: () => mix[turn++ % mix.length]! });
      await sleep(700);
      const killedAt = Date.now();
      expect(await platform.kill(victim, "SIGKILL")).toBe("SIGKILL");
      const downAt = Date.now();
      await sleep(1_500);
      const restartAt = Date.now();
      await platform.start(victim);
      await platform.ready();
      const upAt = Date.now();
      await sleep(1_000);
      const outcomes = await load.stop();

      // Never a hang, never a 500, never a timeout's 504: the answers of an outage are 503 (or, with
      // the gateway itself gone, a refused connection).
      for (const o of outcomes) {
        expect(o.error, describeOutcome(o)).not.toBe("timeout");
        if (o.status === null) expect(victim, describeOutcome(o)).toBe("gateway");
        else expect([200, 201, 503], describeOutcome(o)).toContain(o.status);
        if (o.status === 503) {
          expectError(o.response!, 503, "unavailable");
          expect(o.response!.headers.get("retry-after")).toBe("1");
          expect(o.endedAt - o.startedAt, describeOutcome(o)).toBeLessThan(PROMPT_MS);
        }
      }
      const before = outcomes.filter((o) => o.endedAt < killedAt);
      const down = outcomes.filter((o) => o.startedAt >= downAt && o.endedAt <= restartAt);
      const after = outcomes.filter((o) => o.startedAt >= upAt);
      expect(before.length).toBeGreaterThan(10);
      expect(after.length).toBeGreaterThan(10);
      for (const o of [...before, ...after]) expect(o.status, describeOutcome(o)).toBeGreaterThanOrEqual(200);
      for (const o of [...before, ...after]) expect(o.status, describeOutcome(o)).toBeLessThan(300);

      // While it is down: every op that needs it is refused promptly, every op that does not still
      // succeeds. A credential check needs control unless the gateway still knows the principal.
      expect(down.length).toBeGreaterThan(2 * mix.length);
      for (const o of down) {
        const op = byName(o.op);
        if (victim === "gateway") expect(o.error, describeOutcome(o)).toBe("ECONNREFUSED");
        else if (op.needs.includes(victim)) expect(o.status, describeOutcome(o)).toBe(503);
        else if (victim === "control" && op.authenticated) expect([200, 201, 503]).toContain(o.status);
        else expect(o.status, describeOutcome(o)).toBeLessThan(300);
      }
      const kinds = new Set(down.map((o) => o.op));
      for (const op of mix) expect(kinds, `no ${op.name} while ${victim} was down`).toContain(op.name);

      const durable = await expectDurable(outcomes);
      expect(durable).toBeGreaterThan(0);
      const refused = down.filter((o) => o.status === 503 || o.error !== null).length;
      console.log(
        `SIGKILL ${victim}: ${outcomes.length} requests; while down ${down.length} (${refused} refused, ` +
          `${down.length - refused} served); back ${upAt - restartAt} ms after start; ${durable} writes read back`,
      );
    });
  }
});

/**
 * Holds, from outside, the lock a write takes inside its plane's transaction, so that it waits
 * there: an advisory lock (control's import: its environment's subject count's).
 */
async function holdLock(key: string) {
  const client = new pg.Client({ connectionString: platform.env.DATABASE_URL });
  await client.connect();
  await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [key]);
  let released = false;
  return {
    /** How many sessions of this database wait for a lock right now. */
    async waiters(): Promise<number> {
      const found = await client.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return found.rows[0].n as number;
    },
    async release() {
      if (released) return;
      released = true;
      await client.query("SELECT pg_advisory_unlock_all()");
      await client.end();
    },
  };
}

type HeldWrite = {
  /** The advisory lock's key the write takes inside its transaction. */
  lock: string;
  op: WorkloadOp;
};

/**
 * A write of each plane that the test can hold inside the plane's transaction, by holding the
 * lock it takes: the environment's subject count's (control's import), its quota counter
 * (interview, webhooks) or the bundle name (platform). The gateway's is control's, held in
 * control while the gateway waits for it.
 */
async function heldWrite(name: ProcessName): Promise<HeldWrite> {
  const { tenant, ops } = work;
  switch (name) {
    case "control":
    case "gateway":
      return { lock: `subject_count:${tenant.environmentId}`, op: ops.importSubject };
    case "interview":
      return {
        lock: `quota:${tenant.environmentId}:evaluations`,
        op: ops.createEvaluation,
      };
    case "webhooks":
      return {
        lock: `quota:${tenant.environmentId}:webhook_endpoints`,
        op: ops.createWebhook,
      };
    case "platform": {
      const bundle = (await api.get(`${tenant.app}/bundles/${work.bundleId}`, { apiKey: work.apiKey })).body;
      const components = Object.fromEntries(
        Object.entries(bundle).filter(([field]) => field.endsWith("_version_id")),
      );
      return {
        lock: `bundle:${tenant.appId}:Held`,
        op: {
          name: "createBundle",
          needs: ["gateway", "platform"],
          authenticated: true,
          run: (signal) =>
            api.post(
              `${tenant.app}/bundles`,
              { name: "Held", ...components },
              { apiKey: work.apiKey, signal, idempotencyKey: ik() },
            ),
          readBack: (created) => api.get(`${tenant.app}/bundles/${created.body.id}`, { apiKey: work.apiKey }),
        },
      };
    }
  }
}

describe("SIGTERM drains", () => {
  for (const name of [...SERVICES, "gateway"] as ProcessName[]) {
    it(`of ${name}: every in-flight write succeeds and the process exits 0 within 10 s`, async () => {
      const held = await heldWrite(name);
      const lock = await holdLock(held.lock);
      const count = 16;
      let answered = 0;
      const writes = Promise.all(
        Array.from({ length: count }, () =>
          attempt(held.op, 30_000).finally(() => {
            answered += 1;
          }),
        ),
      );
      let signalledAt = 0;
      let exit: { code: number | string | null; afterMs: number } | undefined;
      try {
        // The writes have reached their plane and wait there, inside their transactions, and none
        // is answered. (Not all of them need to wait on the lock itself: control's import takes it
        // in its last statement, and the sessions behind the first queue on it in other ways.)
        await expect
          .poll(async () => (await lock.waiters()) > 0 && answered === 0, { timeout: 10_000, interval: 50 })
          .toBe(true)
          .catch(async (error) => {
            // Whatever was answered already (not held) says why.
            await lock.release();
            throw new Error(`${error.message}: ${(await writes).map(describeOutcome).join("; ")}`);
          });
        // Every write sent is in flight: give the last ones the time to reach their plane.
        await sleep(300);
        expect(answered).toBe(0);
        signalledAt = Date.now();
        const exited = platform
          .kill(name, "SIGTERM")
          .then((code) => ({ code, afterMs: Date.now() - signalledAt }));
        // Draining: the process has stopped taking new work while the writes are still held.
        await sleep(500);
        await lock.release();
        exit = await exited;
      } finally {
        await lock.release();
        // The next test needs the whole platform, whatever this one found.
        if (signalledAt) await platform.start(name).then(() => platform.ready());
      }
      const outcomes = await writes;
      console.log(
        `SIGTERM ${name}: exit ${exit.code} ${exit.afterMs} ms after the signal, ${count} held writes`,
      );
      expect(exit.code, platform.stderr.join("")).toBe(0);
      expect(exit.afterMs).toBeLessThan(DRAIN_DEADLINE_MS);
      for (const o of outcomes) {
        expect(o.status, describeOutcome(o)).toBeGreaterThanOrEqual(200);
        expect(o.status, describeOutcome(o)).toBeLessThan(300);
        // Each was answered after the signal: it was in flight while the process drained.
        expect(o.endedAt).toBeGreaterThan(signalledAt);
      }
      for (const o of outcomes) {
        const back = await held.op.readBack!(o.response!);
        expect(back.status, `${o.op} answered ${o.status} but reads back ${back.text}`).toBe(200);
      }
    });
  }
});
