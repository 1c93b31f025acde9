// Checks every service's migrations against the rules of docs/configuration.md#migrations
// (packages/kit/src/db/migration-lint.ts): nothing that blocks writes on a table in use, nothing that
// breaks the previous release's code. `npm run lint` runs it after the build.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { lintMigration } from "@evalp/kit";
import { MIGRATIONS } from "./migrate.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Migrations released before these rules, applied on every database since: they are never run
 * again on a table in use, and a migration may not be edited once released. Nothing may be added
 * here; a new migration follows the rules.
 */
export const RELEASED = new Map([
  ["packages/kit/migrations/outbox/001_outbox_subject.sql", ["backfill", "set-not-null"]],
  ["packages/kit/migrations/outbox/002_outbox_published.sql", ["create-index-not-concurrent"]],
  ["services/control/migrations/004_retention.sql", ["create-index-not-concurrent"]],
  ["services/interview/migrations/003_agent_connections.sql", ["create-index-not-concurrent"]],
  ["services/interview/migrations/004_retention.sql", ["create-index-not-concurrent"]],
  ["services/webhooks/migrations/002_retention.sql", ["create-index-not-concurrent"]],
]);

/** Every problem of every migration folder, as printable lines. */
export function lintAll() {
  const dirs = [...new Set(MIGRATIONS.flatMap((set) => set.dirs))];
  const lines = [];
  for (const dir of dirs) {
    for (const file of readdirSync(dir)
      .filter((name) => name.endsWith(".sql"))
      .sort()) {
      const path = relative(ROOT, join(dir, file));
      const allowed = RELEASED.get(path) ?? [];
      const problems = lintMigration(readFileSync(join(dir, file), "utf8"));
      for (const problem of problems) {
        if (allowed.includes(problem.rule)) continue;
        lines.push(`${path}: ${problem.rule}: ${problem.message}\n    ${problem.statement.slice(0, 160)}`);
      }
      // An exception the file no longer needs is one a new problem could hide behind.
      for (const rule of allowed) {
        if (!problems.some((problem) => problem.rule === rule))
          lines.push(`${path}: RELEASED lists ${rule}, which it does not break`);
      }
    }
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = lintAll();
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    process.exit(1);
  }
  console.log("migrations: no problems");
}
