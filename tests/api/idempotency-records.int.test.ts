import { idempotencyRecords, redisKeys } from "@evalp/gateway";
import { sampleContents } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createTenant, ik, type Tenant } from "./support/fixtures.js";
import { keysMatching } from "./support/redis.js";
import { type Stack, startStack } from "./support/stack.js";

// What Idempotency-Key records keep in Redis: answers of a bounded size, with 422 inputs not
// repeated beyond a bound (that a dump shows no credential: tests/reliability/abuse.rel.test.ts).
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startStack();
  api = apiClient(stack.urls);
  tenant = await createTenant(api);
});
afterAll(async () => {
  await stack?.close();
});

/** Every string value under the stack's Redis prefix, as a dump would show them. */
async function dump(): Promise<string[]> {
  const values: string[] = [];
  for (const key of await keysMatching(stack.redis, `${stack.config.REDIS_KEY_PREFIX}*`)) {
    if ((await stack.redis.type(key)) === "string") values.push((await stack.redis.get(key)) ?? "");
  }
  return values;
}

describe("Idempotency-Key records", () => {
  it("repeat no large input in a 422: the record of a 1 MiB body missing its fields stays small", async () => {
    const before = (await dump()).length;
    const answer = await api.post(
      "/auth/signup",
      { nickname: "x".repeat(1024 * 1024 - 100) },
      { idempotencyKey: ik() },
    );
    expect(answer.status).toBe(422);
    expect(answer.text.length).toBeLessThan(8 * 1024);
    const missing = (answer.body.detail as Array<{ type: string; input: unknown }>).filter(
      (item) => item.type === "missing",
    );
    expect(missing.length).toBeGreaterThan(0);
    for (const item of missing) expect(item.input).toMatch(/^\(an object of \d+ bytes, not repeated\)$/);
    const values = await dump();
    expect(values.length).toBe(before + 1);
    expect(Math.max(...values.map((value) => value.length))).toBeLessThan(16 * 1024);
  });

  it("are released and written only by the run that holds the lock: one whose lock expired leaves the next run's alone", async () => {
    const records = idempotencyRecords(stack.redis);
    const keys = redisKeys(stack.config.REDIS_KEY_PREFIX);
    const record = keys.idempotencyRecord("lock-test");
    const lock = keys.idempotencyLock("lock-test");
    expect(await records.claim(record, lock, "first-run", 50)).toEqual({ kind: "claimed" });
    // The first run outlives its lock; a second run claims the key.
    await vi.waitFor(async () => expect(await stack.redis.exists(lock)).toBe(0), { interval: 10 });
    expect(await records.claim(record, lock, "second-run", 60_000)).toEqual({ kind: "claimed" });
    // The first run finishes: it neither releases the second's lock nor stores its answer.
    expect(await records.finish(record, lock, "first-run", "first answer", 60)).toBe(false);
    expect(await stack.redis.get(lock)).toBe("second-run");
    expect(await stack.redis.exists(record)).toBe(0);
    expect(await records.claim(record, lock, "third-run", 60_000)).toEqual({ kind: "busy" });
    // The second run's finish is its own.
    expect(await records.finish(record, lock, "second-run", "second answer", 60)).toBe(true);
    expect(await stack.redis.exists(lock)).toBe(0);
    expect(await stack.redis.get(record)).toBe("second answer");
  });

  it("answer what is too large to keep, release its key, and answer a retry from the plane's record: not run twice", async () => {
    const contents = sampleContents();
    // A context whose defaults make the template's answer far larger than a record keeps.
    (contents.context as Record<string, unknown>).defaults = { note: "y".repeat(300 * 1024) };
    const body = {
      name: "Large",
      definitions: Object.entries(contents).map(([kind, content]) => ({
        business_id: `large.${kind.replace("_", "-")}`,
        locale: "en",
        name: kind,
        content,
      })),
    };
    const key = ik();
    const first = await api.post(`${tenant.app}/templates`, body, {
      token: tenant.token,
      idempotencyKey: key,
    });
    expect(first.status, first.text.slice(0, 300)).toBe(201);
    const again = await api.post(`${tenant.app}/templates`, body, {
      token: tenant.token,
      idempotencyKey: key,
    });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(again.body.id).toBe(first.body.id);
    const templates = await stack
      .pool("platform")
      .query("SELECT count(*)::int AS n FROM templates WHERE name = $1", ["Large"]);
    expect(templates.rows[0].n).toBe(1);
  });
});
