import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import {
  createLogger,
  createPool,
  errorInterceptor,
  IDEMPOTENCY_FINGERPRINT_HEADER,
  IDEMPOTENCY_ID_HEADER,
  IDEMPOTENCY_MIGRATIONS_DIR,
  IDEMPOTENCY_SEAL_HEADER,
  idempotencyInterceptor,
  type Pool,
  type PoolClient,
  requestContextInterceptor,
  withTransaction,
} from "@evalp/kit";
import { UsageService } from "@evalp/proto/common/v1/usage";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.js";

// A plane's keyed write as the gateway calls it, on a real Postgres: the interceptor and the
// transactions of kit, a handler that writes one row and answers how many there are.
let database: TestDatabase;
let pool: Pool;
let observer: pg.Client;
const logger = createLogger("keyed-test", "silent");

beforeAll(async () => {
  database = await createTestDatabase([{ schema: "keyed_test", dirs: [IDEMPOTENCY_MIGRATIONS_DIR] }]);
  pool = createPool({ databaseUrl: database.url, schema: "keyed_test", max: 5 });
  await pool.query("CREATE TABLE things (environment_id text NOT NULL)");
  observer = new pg.Client({ connectionString: database.url });
  await observer.connect();
});
afterAll(async () => {
  await observer?.end();
  await pool?.end();
  await database?.drop();
});

/** What the handler does once its write's transaction is done, before it answers. */
type AfterWrite = (tx: { pid: number }) => Promise<void>;

function plane(afterWrite: AfterWrite, options: { recordsFirst?: boolean } = {}) {
  const runs = { count: 0 };
  const transport = createRouterTransport(
    (router) =>
      router.service(UsageService, {
        async countUsage(req) {
          runs.count += 1;
          const written = await withTransaction(pool, async (tx: PoolClient) => {
            await tx.query("INSERT INTO things (environment_id) VALUES ($1)", [req.environmentId]);
            const { rows } = await tx.query<{ pid: number; n: number }>(
              "SELECT pg_backend_pid() AS pid, (SELECT count(*)::int FROM things WHERE environment_id = $1) AS n",
              [req.environmentId],
            );
            return { pid: rows[0]?.pid ?? 0, things: rows[0]?.n ?? 0 };
          });
          await afterWrite(written);
          return { usage: { things: BigInt(written.things) } };
        },
      }),
    // In a plane's order: the request's context (its logger) and the errors' mapping first, then the key.
    {
      router: {
        interceptors: [
          requestContextInterceptor(logger),
          errorInterceptor,
          idempotencyInterceptor(pool, {
            recordsFirst: options.recordsFirst ? [UsageService.method.countUsage] : [],
          }),
        ],
      },
    },
  );
  const client = createClient(UsageService, transport);
  const headers = {
    [IDEMPOTENCY_ID_HEADER]: randomUUID(),
    [IDEMPOTENCY_FINGERPRINT_HEADER]: "fingerprint",
    [IDEMPOTENCY_SEAL_HEADER]: randomBytes(32).toString("base64url"),
  };
  return {
    runs,
    call: (environmentId: string, fingerprint = "fingerprint") =>
      client.countUsage(
        { environmentId },
        { headers: { ...headers, [IDEMPOTENCY_FINGERPRINT_HEADER]: fingerprint } },
      ),
  };
}

async function thingsOf(environmentId: string): Promise<number> {
  const { rows } = await observer.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM keyed_test.things WHERE environment_id = $1",
    [environmentId],
  );
  return rows[0]?.n ?? 0;
}

async function keyRows(): Promise<Array<{ id: string; has_outcome: boolean }>> {
  const { rows } = await observer.query<{ id: string; has_outcome: boolean }>(
    "SELECT id, outcome IS NOT NULL AS has_outcome FROM keyed_test.idempotency_keys",
  );
  return rows;
}

describe("a keyed write commits with its answer", () => {
  it("no other connection sees the write or its key until the answer is stored with them", async () => {
    await observer.query("DELETE FROM keyed_test.idempotency_keys");
    const environmentId = randomUUID();
    let seenMeanwhile: { things: number; keys: number } | undefined;
    const { runs, call } = plane(async () => {
      seenMeanwhile = { things: await thingsOf(environmentId), keys: (await keyRows()).length };
    });
    const first = await call(environmentId);
    expect(seenMeanwhile).toEqual({ things: 0, keys: 0 });
    expect(first.usage.things).toBe(1n);
    expect(await keyRows()).toEqual([expect.objectContaining({ has_outcome: true })]);
    // A retry is answered the stored outcome: the write is not run again.
    const again = await call(environmentId);
    expect(again.usage.things).toBe(1n);
    expect(runs.count).toBe(1);
    expect(await thingsOf(environmentId)).toBe(1);
  });

  it("a run whose connection dies before its answer leaves neither the write nor the key: the retry writes once", async () => {
    await observer.query("DELETE FROM keyed_test.idempotency_keys");
    const environmentId = randomUUID();
    let dying = true;
    const { runs, call } = plane(async ({ pid }) => {
      // The process serving the call dies here, as a SIGKILL would leave it: its session ends.
      if (dying) await observer.query("SELECT pg_terminate_backend($1)", [pid]);
      dying = false;
    });
    await expect(call(environmentId)).rejects.toThrow();
    expect(await thingsOf(environmentId)).toBe(0);
    expect(await keyRows()).toEqual([]);
    const retried = await call(environmentId);
    expect(retried.usage.things).toBe(1n);
    expect(runs.count).toBe(2);
    expect(await thingsOf(environmentId)).toBe(1);
  });

  it("a handler that reads after its write sees it, and its answer is still stored", async () => {
    await observer.query("DELETE FROM keyed_test.idempotency_keys");
    const environmentId = randomUUID();
    let readBack = -1;
    const { call } = plane(async () => {
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM things WHERE environment_id = $1",
        [environmentId],
      );
      readBack = rows[0]?.n ?? -1;
    });
    await call(environmentId);
    expect(readBack).toBe(1);
    expect(await keyRows()).toEqual([expect.objectContaining({ has_outcome: true })]);
  });

  it("slow work after the write does not hold the write's locks: it commits within a quarter second", async () => {
    await observer.query("DELETE FROM keyed_test.idempotency_keys");
    const environmentId = randomUUID();
    let seenAfterWait = -1;
    const { call } = plane(async () => {
      await sleep(600);
      seenAfterWait = await thingsOf(environmentId);
    });
    const answer = await call(environmentId);
    expect(seenAfterWait).toBe(1);
    expect(answer.usage.things).toBe(1n);
    expect(await keyRows()).toEqual([expect.objectContaining({ has_outcome: true })]);
  });
});

describe("a keyed write that records its key first (no look-up before it runs)", () => {
  it("answers a retry the stored outcome, refuses the key with another request, and writes once", async () => {
    await observer.query("DELETE FROM keyed_test.idempotency_keys");
    const environmentId = randomUUID();
    const { runs, call } = plane(async () => {}, { recordsFirst: true });
    expect((await call(environmentId)).usage.things).toBe(1n);
    const again = await call(environmentId);
    expect(again.usage.things).toBe(1n);
    await expect(call(environmentId, "another request")).rejects.toThrow(/different request/);
    // The retries reached the handler (there was no look-up), whose transaction found the key.
    expect(runs.count).toBe(3);
    expect(await thingsOf(environmentId)).toBe(1);
    expect(await keyRows()).toEqual([expect.objectContaining({ has_outcome: true })]);
  });
});
