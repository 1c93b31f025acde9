import {
  createPool,
  enforceQuota,
  newId,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  withTransaction,
} from "@evalp/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.js";

// The kit's quota guard as another plane would use it: its own rows, the limit from elsewhere.
let database: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  database = await createTestDatabase([{ schema: "quota_test", dirs: [OUTBOX_MIGRATIONS_DIR] }]);
  pool = createPool({ databaseUrl: database.url, schema: "quota_test", max: 10 });
  await pool.query("CREATE TABLE things (id uuid PRIMARY KEY, environment_id uuid NOT NULL)");
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const create = (environmentId: string, limit: number) =>
  withTransaction(pool, async (tx) => {
    await enforceQuota(tx, {
      environmentId,
      counter: "evaluations",
      // A limit fetched over the network in real use: make it slow so transactions overlap.
      limit: () => new Promise((resolve) => setTimeout(() => resolve(limit), 5)),
      usage: async () =>
        (
          await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM things WHERE environment_id = $1", [
            environmentId,
          ])
        ).rows[0]?.n ?? 0,
    });
    await tx.query("INSERT INTO things (id, environment_id) VALUES ($1, $2)", [newId(), environmentId]);
  });

describe("enforceQuota", () => {
  it("lets concurrent creations reach the limit and never pass it", async () => {
    const environmentId = newId();
    const results = await Promise.allSettled(Array.from({ length: 25 }, () => create(environmentId, 6)));
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(6);
    const refused = results.find((result) => result.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({
      code: "quota_exceeded",
      context: { counter: "evaluations", limit: 6, usage: 6 },
    });
    const counted = await pool.query("SELECT count(*)::int AS n FROM things WHERE environment_id = $1", [
      environmentId,
    ]);
    expect(counted.rows[0].n).toBe(6);
  });

  it("counts each environment on its own", async () => {
    const [a, b] = [newId(), newId()];
    await Promise.all([create(a, 1), create(b, 1)]);
    await expect(create(a, 1)).rejects.toMatchObject({ code: "quota_exceeded" });
  });
});
