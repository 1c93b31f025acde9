import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withDefaultUser } from "./db.js";
import { preparedStatement } from "./prepared-statements.js";
import { runBatch, runBeforeCommit } from "./statement-batch.js";

// A real Postgres (the tests' server), temporary tables only: a batch is a conversation with it.
let client: pg.Client;
/** Writes the client made to its socket (each a round trip's worth of messages). */
let writes = 0;

const INSERT = preparedStatement(
  "test.batch_insert",
  "INSERT INTO batch_items (n, at) VALUES ($1, $2) RETURNING n, at",
);
const COUNT = preparedStatement(
  "test.batch_count",
  "SELECT count(*) AS items, $1::text[] AS echoed FROM batch_items",
);

const url = withDefaultUser(
  process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/postgres",
);

beforeAll(async () => {
  client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("CREATE TEMPORARY TABLE batch_items (n int8 PRIMARY KEY, at timestamptz NOT NULL)");
  // Counts the socket's writes: corked messages leave in one `_writev`, a lone one in `_write`.
  type Write = (...args: unknown[]) => unknown;
  const stream = (client as unknown as { connection: { stream: { _write: Write; _writev: Write } } })
    .connection.stream;
  for (const method of ["_write", "_writev"] as const) {
    const original = stream[method].bind(stream);
    stream[method] = (...args: unknown[]) => {
      writes += 1;
      return original(...args);
    };
  }
});
afterAll(async () => {
  await client?.end();
});

async function prepared(): Promise<string[]> {
  const found = await client.query<{ name: string }>(
    "SELECT name FROM pg_prepared_statements WHERE name LIKE 'test.batch%' ORDER BY name",
  );
  return found.rows.map((row) => row.name);
}

describe("a batch of statements", () => {
  it("runs them in order in one write, each with its own values, and answers each result", async () => {
    const at = new Date("2026-01-02T03:04:05.678Z");
    const before = writes;
    const results = await runBatch(client, [
      { text: "BEGIN" },
      INSERT([1, at]),
      INSERT([2, at]),
      COUNT([["a", "b,c"]]),
      { text: "COMMIT" },
    ]);
    expect(writes - before).toBe(1);
    expect(results.map((result) => result.command)).toEqual([
      "BEGIN",
      "INSERT",
      "INSERT",
      "SELECT",
      "COMMIT",
    ]);
    // Parsed as node-postgres parses its own results: int8 a number here (kit's parser), a Date.
    expect(results[1]?.rows).toEqual([{ n: 1, at }]);
    expect(results[3]?.rows).toEqual([{ items: 2, echoed: ["a", "b,c"] }]);
    expect(results[3]?.rowCount).toBe(1);
  });

  it("prepares a named statement once per connection, as node-postgres's own queries do", async () => {
    expect(await prepared()).toEqual(["test.batch_count", "test.batch_insert"]);
    await runBatch(client, [COUNT([[]]), COUNT([[]])]);
    // node-postgres knows it prepared: its own query by that name sends no second Parse (which
    // Postgres would refuse as a duplicate).
    const again = await client.query(COUNT([["x"]]));
    expect(again.rows[0]).toEqual({ items: 2, echoed: ["x"] });
    expect(await prepared()).toEqual(["test.batch_count", "test.batch_insert"]);
  });

  it("stops at a failed statement: none after it runs, a COMMIT behind it included", async () => {
    await client.query("BEGIN");
    await expect(
      runBatch(client, [
        INSERT([3, new Date()]),
        INSERT([1, new Date()]),
        INSERT([4, new Date()]),
        { text: "COMMIT" },
      ]),
    ).rejects.toMatchObject({ code: "23505" });
    // Still in the transaction, aborted: the caller rolls it back.
    await expect(client.query("SELECT 1")).rejects.toMatchObject({ code: "25P02" });
    await client.query("ROLLBACK");
    const left = await client.query<{ n: number }>("SELECT n FROM batch_items ORDER BY n");
    expect(left.rows.map((row) => row.n)).toEqual([1, 2]);
  });

  it("forgets a name whose Parse a failure skipped or refused, and prepares it when next used", async () => {
    const later = preparedStatement("test.batch_later", "SELECT $1::int AS later");
    const broken = preparedStatement("test.batch_broken", "SELEKT 1");
    await expect(runBatch(client, [{ text: "SELECT 1/0" }, later([1])])).rejects.toMatchObject({
      code: "22012",
    });
    await expect(runBatch(client, [broken([])])).rejects.toMatchObject({ code: "42601" });
    const results = await runBatch(client, [later([7])]);
    expect(results[0]?.rows).toEqual([{ later: 7 }]);
    expect(await prepared()).toEqual(["test.batch_count", "test.batch_insert", "test.batch_later"]);
  });

  it("refuses a name used for another text, and sends nothing", async () => {
    const before = writes;
    await expect(
      runBatch(client, [{ name: "test.batch_count", text: "SELECT 2", values: [] }]),
    ).rejects.toThrow(/two texts/);
    expect(writes).toBe(before);
    // The connection goes on.
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("fails, and keeps its connection, when a row cannot be read", async () => {
    // A parser that throws, for int4 (oid 23) only while this statement's rows are read.
    const INT4 = 23;
    const original = pg.types.getTypeParser(INT4, "text");
    pg.types.setTypeParser(INT4, () => {
      throw new Error("unreadable value");
    });
    try {
      await expect(runBatch(client, [{ text: "SELECT 1::int4 AS n" }])).rejects.toThrow(/unreadable value/);
    } finally {
      pg.types.setTypeParser(INT4, original);
    }
    expect((await client.query("SELECT 1::int4 AS one")).rows).toEqual([{ one: 1 }]);
  });
});

describe("a statement run before its commit", () => {
  // A table other sessions can see (temporary ones they cannot), whose commits wait or fail as a
  // deferred trigger says: `slow` rows make the commit wait 400 ms, `bad` rows make it fail.
  const table = `commit_items_${process.pid}_${Date.now()}`;
  let other: pg.Client;
  beforeAll(async () => {
    other = new pg.Client({ connectionString: url });
    await other.connect();
    await client.query(`CREATE TABLE ${table} (n int4 PRIMARY KEY, kind text NOT NULL)`);
    await client.query(`CREATE FUNCTION ${table}_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.kind = 'slow' THEN PERFORM pg_sleep(0.4); END IF;
        IF NEW.kind = 'bad' THEN RAISE EXCEPTION 'refused at commit'; END IF;
        RETURN NULL;
      END $$`);
    await client.query(`CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON ${table}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${table}_at_commit()`);
  });
  afterAll(async () => {
    await client.query(`DROP TABLE IF EXISTS ${table}`);
    await client.query(`DROP FUNCTION IF EXISTS ${table}_at_commit()`);
    await other?.end();
  });
  const insert = (n: number, kind: string) => ({
    text: `INSERT INTO ${table} (n, kind) VALUES ($1, $2) RETURNING n`,
    values: [n, kind],
  });
  const seen = async (n: number) =>
    (await other.query(`SELECT 1 FROM ${table} WHERE n = $1`, [n])).rowCount === 1;

  it("answers the result while the commit runs, and the row is seen once it has committed", async () => {
    const started = performance.now();
    const { result, committed } = runBeforeCommit(client, insert(1, "slow"));
    expect((await result).rows).toEqual([{ n: 1 }]);
    const answeredAfter = performance.now() - started;
    expect(await seen(1)).toBe(false);
    await committed;
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
    expect(answeredAfter).toBeLessThan(400);
    expect(await seen(1)).toBe(true);
  });

  it("rejects `committed` when the commit fails after the result was answered, and the row is gone", async () => {
    const { result, committed } = runBeforeCommit(client, insert(2, "bad"));
    expect((await result).rows).toEqual([{ n: 2 }]);
    await expect(committed).rejects.toThrow("refused at commit");
    expect(await seen(2)).toBe(false);
    // The connection is ready for the next statement.
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("rejects both when the statement fails", async () => {
    const { result, committed } = runBeforeCommit(client, insert(1, "plain"));
    await expect(result).rejects.toMatchObject({ code: "23505" });
    await expect(committed).rejects.toMatchObject({ code: "23505" });
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });
});
