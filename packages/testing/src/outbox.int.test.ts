import { createPool, OUTBOX_MIGRATIONS_DIR, type Pool, withTransaction, writeOutboxEvent } from "@evalp/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.js";

// The outbox writer of the shared kit, against a real Postgres schema that has only the outbox.
const SETS = [{ schema: "outbox_test", dirs: [OUTBOX_MIGRATIONS_DIR] }];

let database: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  database = await createTestDatabase(SETS);
  pool = createPool({ databaseUrl: database.url, schema: "outbox_test", max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";

describe("writeOutboxEvent", () => {
  it("stores the webhook envelope, unpublished, when its transaction commits", async () => {
    const event = await withTransaction(pool, (tx) =>
      writeOutboxEvent(tx, { type: "quota.updated", environmentId: ENVIRONMENT, data: { revision: 2 } }),
    );
    expect(event).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/),
      type: "quota.updated",
      timestamp: expect.stringMatching(/Z$/),
      environment_id: ENVIRONMENT,
      data: { revision: 2 },
    });
    const rows = await pool.query("SELECT event_type, payload, published_at FROM outbox WHERE id = $1", [
      event.id,
    ]);
    expect(rows.rows).toEqual([{ event_type: "quota.updated", payload: event, published_at: null }]);
  });

  it("leaves nothing when the transaction that made the change rolls back", async () => {
    let id = "";
    await expect(
      withTransaction(pool, async (tx) => {
        id = (await writeOutboxEvent(tx, { type: "subject.imported", environmentId: ENVIRONMENT, data: {} }))
          .id;
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    const rows = await pool.query("SELECT 1 FROM outbox WHERE id = $1", [id]);
    expect(rows.rowCount).toBe(0);
  });
});
