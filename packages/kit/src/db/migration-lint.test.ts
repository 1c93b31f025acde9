import { describe, expect, it } from "vitest";
import { statementsOf } from "./migrate.js";
import { lintMigration, migrationStatements } from "./migration-lint.js";

const rules = (sql: string) => lintMigration(sql).map((problem) => problem.rule);
const up = (body: string, down = "SELECT 1;") => `-- Up Migration\n${body}\n\n-- Down Migration\n${down}\n`;

describe("lintMigration", () => {
  it("accepts what is safe on a table in use: new tables and their indexes, nullable columns, defaults", () => {
    expect(
      rules(
        up(
          `
-- The owner's notes; it's new.
CREATE TABLE notes (id uuid PRIMARY KEY, body text NOT NULL);
CREATE INDEX notes_body ON notes (body);
UPDATE notes SET body = '';
ALTER TABLE notes ALTER COLUMN body SET NOT NULL;
ALTER TABLE items ADD COLUMN note text;
ALTER TABLE items ADD COLUMN flags jsonb NOT NULL DEFAULT '{}';
ALTER TABLE items ADD CONSTRAINT items_note CHECK (note <> '') NOT VALID;
ALTER TABLE items VALIDATE CONSTRAINT items_note;
ALTER TABLE items SET (fillfactor = 70);
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE items SET note = NULL WHERE id = NEW.id;
  RETURN NEW;
END $$;`,
          "DROP TABLE notes; UPDATE items SET note = NULL;",
        ),
      ),
    ).toEqual([]);
  });

  it("refuses what blocks writes on an existing table or breaks the previous release", () => {
    expect(rules(up("CREATE INDEX items_note ON items (note);"))).toEqual(["create-index-not-concurrent"]);
    expect(rules(up("CREATE UNIQUE INDEX IF NOT EXISTS items_note ON ONLY public.items (note);"))).toEqual([
      "create-index-not-concurrent",
    ]);
    expect(rules(up("CREATE INDEX CONCURRENTLY items_note ON items (note);"))).toEqual([
      "concurrently-in-transaction",
    ]);
    expect(rules(up("UPDATE items SET note = '' WHERE note IS NULL;"))).toEqual(["backfill"]);
    expect(rules(up("DELETE FROM items;"))).toEqual(["backfill"]);
    expect(rules(up("ALTER TABLE items ADD COLUMN size int NOT NULL;"))).toEqual(["add-column-not-null"]);
    expect(rules(up("ALTER TABLE items ALTER COLUMN note SET NOT NULL;"))).toEqual(["set-not-null"]);
    expect(rules(up("ALTER TABLE items ALTER COLUMN size TYPE bigint;"))).toEqual(["alter-column-type"]);
    expect(rules(up("ALTER TABLE items RENAME COLUMN note TO remark;"))).toEqual(["rename"]);
    expect(rules(up("ALTER TABLE items RENAME TO things;"))).toEqual(["rename"]);
    expect(
      rules(up("ALTER TABLE items ADD CONSTRAINT items_owner FOREIGN KEY (owner) REFERENCES owners (id);")),
    ).toEqual(["constraint-not-valid"]);
    expect(rules(up("ALTER TABLE items ADD CONSTRAINT items_note_key UNIQUE (note);"))).toEqual([
      "unique-constraint",
    ]);
    expect(
      rules(up("ALTER TABLE items ADD CONSTRAINT items_note_key UNIQUE USING INDEX items_note;")),
    ).toEqual([]);
    expect(rules(up("DROP INDEX items_note;"))).toEqual(["drop-index-not-concurrent"]);
  });

  it("lets a contraction through only when the file says why it is safe now", () => {
    expect(rules(up("ALTER TABLE items DROP COLUMN note;"))).toEqual(["contract"]);
    expect(rules(up("DROP TABLE IF EXISTS items;"))).toEqual(["contract"]);
    expect(
      rules(
        up("-- contract: nothing reads items.note since release 0.3\nALTER TABLE items DROP COLUMN note;"),
      ),
    ).toEqual([]);
    // Dropping a default or a constraint removes nothing the code reads.
    expect(
      rules(up("ALTER TABLE items ALTER COLUMN note DROP DEFAULT, DROP CONSTRAINT items_note;")),
    ).toEqual([]);
  });

  it("accepts a no-transaction file of drop-then-create concurrent index builds, and nothing else in one", () => {
    const good = [
      "-- migrate: no-transaction",
      "-- Up Migration",
      "DROP INDEX CONCURRENTLY IF EXISTS items_note;",
      "CREATE INDEX CONCURRENTLY items_note ON items (note);",
      "",
    ].join("\n");
    expect(rules(good)).toEqual([]);
    expect(statementsOf(good)).toEqual([
      "DROP INDEX CONCURRENTLY IF EXISTS items_note",
      "CREATE INDEX CONCURRENTLY items_note ON items (note)",
    ]);
    // Without the drop, an interrupted build's invalid index would stay.
    expect(
      rules("-- migrate: no-transaction\nCREATE INDEX CONCURRENTLY items_note ON items (note);\n"),
    ).toEqual(["no-transaction-file"]);
    expect(
      rules(
        "-- migrate: no-transaction\nALTER TABLE items ADD COLUMN x int;\n-- Down Migration\nDROP INDEX CONCURRENTLY items_note;\n",
      ),
    ).toEqual(["no-transaction-file", "no-transaction-file"]);
    expect(rules("-- migrate: no-transaction\nDROP INDEX CONCURRENTLY IF EXISTS items_old;\n")).toEqual([]);
  });

  it("reads only the up section, without comments, strings or function bodies", () => {
    expect(
      migrationStatements(up("-- it's a comment\nSELECT 'a;b' ; SELECT $x$ ; $x$;", "DROP TABLE t;")),
    ).toEqual(["SELECT ''", "SELECT $$"]);
  });
});
