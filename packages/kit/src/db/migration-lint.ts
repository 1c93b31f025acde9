import { isNoTransaction } from "./migrate.js";

/**
 * What a migration must not do to a table that already holds data while the previous release
 * serves from it (docs/configuration.md#migrations): take a lock that blocks writes for as long as
 * the table is large, or break the code that still reads it. Each rule names what to do instead.
 */
export const MIGRATION_RULES = {
  "create-index-not-concurrent":
    "CREATE INDEX on an existing table blocks its writes: build it CONCURRENTLY in a no-transaction file",
  "concurrently-in-transaction":
    "CONCURRENTLY cannot run in a transaction: put it in a file whose first line is `-- migrate: no-transaction`",
  "no-transaction-file":
    "a no-transaction file holds only `DROP INDEX CONCURRENTLY IF EXISTS x;` then `CREATE INDEX CONCURRENTLY x …;` pairs, and no down section",
  backfill:
    "UPDATE or DELETE of an existing table rewrites it under locks in one transaction: backfill from the application, in batches",
  "add-column-not-null":
    "ADD COLUMN … NOT NULL without a DEFAULT fails on a table with rows: give it a DEFAULT",
  "set-not-null":
    "SET NOT NULL scans the table under an ACCESS EXCLUSIVE lock: add a CHECK (… IS NOT NULL) NOT VALID, validate it later",
  "alter-column-type":
    "ALTER COLUMN … TYPE rewrites the table under an ACCESS EXCLUSIVE lock: add a new column instead",
  rename:
    "RENAME breaks the previous release's code, which still runs during the rollout: add, then drop later",
  "constraint-not-valid":
    "a FOREIGN KEY or CHECK added to an existing table scans it under lock: add it NOT VALID, VALIDATE it in a later file",
  "unique-constraint":
    "ADD UNIQUE or PRIMARY KEY builds an index under lock: CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT … USING INDEX",
  contract:
    "DROP TABLE or DROP COLUMN breaks the previous release's code: drop only what no running release reads, saying which in a `-- contract: …` line",
  "drop-index-not-concurrent":
    "DROP INDEX takes an ACCESS EXCLUSIVE lock on its table: DROP INDEX CONCURRENTLY IF EXISTS in a no-transaction file",
} as const;

export type MigrationRule = keyof typeof MIGRATION_RULES;
export type MigrationProblem = { rule: MigrationRule; statement: string; message: string };

/** A migration's `-- Up Migration` section (the whole text when it has no markers). */
function upSection(sql: string): string {
  const up = sql.search(/^\s*--[\s-]*up\s+migration/im);
  const down = sql.search(/^\s*--[\s-]*down\s+migration/im);
  if (up < 0) return down < 0 ? sql : sql.slice(0, down);
  return sql.slice(up, down > up ? down : undefined);
}

/**
 * The statements of a migration's up section, upper-cased and on one line each, with comments,
 * string literals and dollar-quoted bodies (functions) blanked, so that what a function's body
 * does at run time is not taken for what the migration does.
 */
export function migrationStatements(sql: string): string[] {
  return (
    upSection(sql)
      .replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/g, "$$$$")
      // Comments before strings: an apostrophe in a comment opens no string.
      .replace(/--[^\n]*/g, "")
      .replace(/'(?:[^']|'')*'/g, "''")
      .split(";")
      .map((statement) => statement.replace(/\s+/g, " ").trim().toUpperCase())
      .filter((statement) => statement.length > 0)
  );
}

const NAME = String.raw`(?:"[^"]+"|[A-Z_][A-Z0-9_$]*)(?:\.(?:"[^"]+"|[A-Z_][A-Z0-9_$]*))?`;
const unqualified = (name: string) => (name.split(".").pop() ?? name).replaceAll('"', "");

/** Every problem of one migration file; empty when it may run against tables in use. */
export function lintMigration(sql: string): MigrationProblem[] {
  const problems: MigrationProblem[] = [];
  const report = (rule: MigrationRule, statement: string) =>
    problems.push({ rule, statement, message: MIGRATION_RULES[rule] });
  const statements = migrationStatements(sql);
  const created = new Set<string>();
  const noTransaction = isNoTransaction(sql);
  // A contraction says why it is safe now: `-- contract: nothing reads … since release …`.
  const contracted = /^\s*--\s*contract:\s*\S/im.test(upSection(sql));

  if (noTransaction) {
    const dropped = new Set<string>();
    if (/^\s*--[\s-]*down\s+migration/im.test(sql)) report("no-transaction-file", "-- Down Migration");
    for (const statement of statements) {
      const drop = new RegExp(`^DROP INDEX CONCURRENTLY IF EXISTS (${NAME})$`).exec(statement);
      const create = new RegExp(`^CREATE (?:UNIQUE )?INDEX CONCURRENTLY (${NAME}) ON `).exec(statement);
      if (drop?.[1]) dropped.add(unqualified(drop[1]));
      else if (create?.[1] && dropped.has(unqualified(create[1]))) continue;
      else report("no-transaction-file", statement);
    }
    return problems;
  }

  for (const statement of statements) {
    const table = new RegExp(`^CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?(${NAME})`).exec(statement);
    if (table?.[1]) {
      created.add(unqualified(table[1]));
      continue;
    }
    const index = new RegExp(
      `^CREATE (?:UNIQUE )?INDEX (CONCURRENTLY )?(?:IF NOT EXISTS )?(?:${NAME} )?ON (?:ONLY )?(${NAME})`,
    ).exec(statement);
    if (index) {
      if (index[1]) report("concurrently-in-transaction", statement);
      else if (!created.has(unqualified(index[2] ?? ""))) report("create-index-not-concurrent", statement);
      continue;
    }
    const dropTable = new RegExp(`^DROP TABLE (?:IF EXISTS )?(${NAME})`).exec(statement);
    if (dropTable?.[1]) {
      if (!created.has(unqualified(dropTable[1])) && !contracted) report("contract", statement);
      continue;
    }
    if (/^DROP INDEX /.test(statement)) {
      report(
        /^DROP INDEX CONCURRENTLY /.test(statement)
          ? "concurrently-in-transaction"
          : "drop-index-not-concurrent",
        statement,
      );
      continue;
    }
    const write = new RegExp(`^(?:UPDATE (?:ONLY )?|DELETE FROM (?:ONLY )?)(${NAME})`).exec(statement);
    if (write?.[1] && !created.has(unqualified(write[1]))) {
      report("backfill", statement);
      continue;
    }
    const alter = new RegExp(`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?(${NAME}) (.*)$`).exec(statement);
    if (alter?.[1] && !created.has(unqualified(alter[1]))) {
      const action = alter[2] ?? "";
      // ADD COLUMN … NOT NULL without DEFAULT, per ADD clause.
      for (const clause of action.split(/,(?![^(]*\))/)) {
        if (
          /\bADD (?:COLUMN )?/.test(clause) &&
          !/\bCONSTRAINT\b|\bADD (?:PRIMARY KEY|UNIQUE|CHECK|FOREIGN KEY)\b/.test(clause)
        ) {
          if (/\bNOT NULL\b/.test(clause) && !/\bDEFAULT\b/.test(clause))
            report("add-column-not-null", statement);
        }
      }
      if (/\bSET NOT NULL\b/.test(action)) report("set-not-null", statement);
      if (/\bALTER (?:COLUMN )?\S+ (?:SET DATA )?TYPE\b/.test(action)) report("alter-column-type", statement);
      if (/\bRENAME\b/.test(action)) report("rename", statement);
      if (/\bDROP (?:COLUMN )?(?!CONSTRAINT\b|DEFAULT\b|NOT NULL\b)\S/.test(action) && !contracted) {
        report("contract", statement);
      }
      if (/\bADD (?:CONSTRAINT \S+ )?(?:FOREIGN KEY|CHECK)\b/.test(action) && !/\bNOT VALID\b/.test(action)) {
        report("constraint-not-valid", statement);
      }
      if (
        /\bADD (?:CONSTRAINT \S+ )?(?:UNIQUE|PRIMARY KEY)\b/.test(action) &&
        !/\bUSING INDEX\b/.test(action)
      ) {
        report("unique-constraint", statement);
      }
      // A column's REFERENCES added with it (ADD COLUMN x uuid REFERENCES y) validates too, but
      // on a new column of NULLs it scans nothing worth a rule.
      continue;
    }
    if (/^ALTER (?:TABLE|INDEX|SEQUENCE|VIEW) .* RENAME\b/.test(statement)) report("rename", statement);
  }
  return problems;
}
