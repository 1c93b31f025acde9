import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitWith, createPool, type Pool, type PoolClient, withTransaction } from "./db.js";

// A real Postgres (the tests' server): one connection, so its temporary table is every query's.
let pool: Pool;
/** Writes made to the connection's socket since it was last lent (each a round trip's worth). */
let writes = 0;

beforeAll(async () => {
  pool = createPool({
    databaseUrl:
      process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/postgres",
    schema: "public",
    max: 1,
  });
  pool.on("acquire", (client: PoolClient) => {
    writes = 0;
    type Write = (...args: unknown[]) => unknown;
    const stream = (
      client as unknown as { connection: { stream: Record<"_write" | "_writev", Write> & object } }
    ).connection.stream;
    if (counted.has(stream)) return;
    counted.add(stream);
    for (const method of ["_write", "_writev"] as const) {
      const original = stream[method].bind(stream);
      stream[method] = (...args: unknown[]) => {
        writes += 1;
        return original(...args);
      };
    }
  });
  await pool.query("CREATE TEMPORARY TABLE committed_items (n int PRIMARY KEY)");
});
afterAll(async () => {
  await pool?.end();
});
const counted = new WeakSet<object>();

async function items(): Promise<number[]> {
  const found = await pool.query<{ n: number }>("SELECT n FROM committed_items ORDER BY n");
  return found.rows.map((row) => row.n);
}

describe("a transaction of withTransaction", () => {
  it("runs its first statement in BEGIN's round trip, and its last with COMMIT", async () => {
    await withTransaction(
      pool,
      async (tx, first) => {
        expect(writes).toBe(1);
        // Inside the transaction: now() is the transaction's start, the first statement's too.
        const now = await tx.query<{ began: Date }>("SELECT now() AS began");
        expect(first?.rows[0]?.began).toEqual(now.rows[0]?.began);
        const last = await commitWith(
          tx,
          { text: "INSERT INTO committed_items VALUES (1) RETURNING n" },
          undefined,
        );
        expect(last.rows).toEqual([{ n: 1 }]);
      },
      { first: { text: "SELECT now() AS began" } },
    );
    // BEGIN and the first; the read; the last and COMMIT: nothing more was sent.
    expect(writes).toBe(3);
    expect(await items()).toEqual([1]);
  });

  it("commits nothing when the last statement fails, and rolls back what came before", async () => {
    await expect(
      withTransaction(pool, async (tx) => {
        await tx.query("INSERT INTO committed_items VALUES (2)");
        await commitWith(tx, { text: "INSERT INTO committed_items VALUES (1)" }, undefined);
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect(await items()).toEqual([1]);
  });

  it("is the only place commitWith ends a transaction", async () => {
    const client = await pool.connect();
    try {
      await expect(commitWith(client, { text: "SELECT 1" }, undefined)).rejects.toThrow(/withTransaction/);
    } finally {
      client.release();
    }
  });
});
