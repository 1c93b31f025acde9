import { migrate, OUTBOX_MIGRATIONS_DIR, schemaRole, schemaRoleUrl } from "@evalp/kit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.js";

// The migrations make each schema its role's, also in a database migrated before the roles
// existed (everything there owned by the administrator), and no role reaches another's schema.
const SETS = [
  { schema: "roles_test_a", dirs: [OUTBOX_MIGRATIONS_DIR] },
  { schema: "roles_test_b", dirs: [OUTBOX_MIGRATIONS_DIR] },
];

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase([]);
});
afterAll(async () => {
  await database?.drop();
});

async function as<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

describe("migrate", () => {
  it("hands a schema the administrator made, and all in it, to its role, then migrates it as the role", async () => {
    // As an earlier version left it: the schema, a table with a serial, a type and a function, the administrator's.
    await as(database.url, (admin) =>
      admin.query(`
        CREATE SCHEMA roles_test_a;
        CREATE TYPE roles_test_a.kind AS ENUM ('one', 'two');
        CREATE TABLE roles_test_a.legacy (id serial PRIMARY KEY, kind roles_test_a.kind NOT NULL);
        CREATE FUNCTION roles_test_a.twice(n int) RETURNS int LANGUAGE sql AS 'SELECT n * 2';
      `),
    );
    await migrate(database.url, SETS);
    const owners = await as(database.url, (admin) =>
      admin.query<{ name: string; owner: string }>(
        `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'roles_test_a' AND c.relkind IN ('r', 'S')
         UNION ALL SELECT 'schema', pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'roles_test_a'
         UNION ALL SELECT 'twice', pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'twice'
         UNION ALL SELECT 'kind', pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'kind'`,
      ),
    );
    expect(new Set(owners.rows.map((row) => row.owner))).toEqual(new Set([schemaRole("roles_test_a")]));
    expect(owners.rows.map((row) => row.name)).toEqual(
      expect.arrayContaining(["legacy", "legacy_id_seq", "outbox"]),
    );
    // The role uses all of it, as its own.
    await as(schemaRoleUrl(database.url, "roles_test_a"), async (role) => {
      await role.query("INSERT INTO roles_test_a.legacy (kind) VALUES ('two')");
      const { rows } = await role.query("SELECT roles_test_a.twice(id) AS n FROM roles_test_a.legacy");
      expect(rows).toEqual([{ n: 2 }]);
    });
  });

  it("gives a role no right on another role's schema", async () => {
    await migrate(database.url, SETS);
    await as(schemaRoleUrl(database.url, "roles_test_b"), async (role) => {
      await expect(role.query("SELECT count(*) FROM roles_test_a.outbox")).rejects.toMatchObject({
        code: "42501",
      });
      await expect(role.query("INSERT INTO roles_test_a.legacy (kind) VALUES ('one')")).rejects.toMatchObject(
        {
          code: "42501",
        },
      );
      const { rows } = await role.query("SELECT count(*)::int AS n FROM roles_test_b.outbox");
      expect(rows).toEqual([{ n: 0 }]);
    });
  });
});
