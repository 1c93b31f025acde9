// Creates the database named in DATABASE_URL when it is missing and applies every service's
// migrations, each into its own schema. `npm run migrate`; `npm start` runs it first; in
// Kubernetes the Job `evalp-migrate` runs it once per rollout. Both connect to DATABASE_DIRECT_URL
// when it is set: the migrations' advisory lock is held by a session, which a transaction pooler
// would not keep.
//
// `--wait`: applies nothing; waits until the database has every migration of this code (a pod of
// a new release, while the Job migrates), then exits 0, or 1 after MIGRATION_WAIT_TIMEOUT_MS.
import { migrations as control } from "@evalp/control";
import { migrations as interview } from "@evalp/interview";
import { configSchema, directDatabaseUrl, ensureDatabase, migrate, pendingMigrations } from "@evalp/kit";
import { migrations as platform } from "@evalp/platform";
import { migrations as webhooks } from "@evalp/webhooks";

export const MIGRATIONS = [control, platform, interview, webhooks];

export async function migrateAll(databaseUrl, timeouts) {
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl, MIGRATIONS, timeouts);
}

/** Polls the history tables until nothing is pending; resolves with what is still pending at the deadline. */
export async function waitForMigrations(databaseUrl, timeoutMs, intervalMs = 2_000) {
  const deadline = Date.now() + timeoutMs;
  let pending = [];
  for (;;) {
    try {
      pending = await pendingMigrations(databaseUrl, MIGRATIONS);
      if (pending.length === 0) return [];
    } catch (error) {
      // The database not accepting connections yet is a reason to wait, not to fail.
      pending = [`(database not reachable: ${error.message})`];
    }
    if (Date.now() >= deadline) return pending;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // Only the database is needed to migrate (no secret), so a migration job needs no JWT_SECRET.
  const config = configSchema
    .pick({
      DATABASE_URL: true,
      DATABASE_DIRECT_URL: true,
      MIGRATION_LOCK_TIMEOUT_MS: true,
      MIGRATION_STATEMENT_TIMEOUT_MS: true,
      MIGRATION_WAIT_TIMEOUT_MS: true,
    })
    .parse(process.env);
  if (process.argv.includes("--wait")) {
    // Reads the history tables only: through the pooler is fine.
    const pending = await waitForMigrations(config.DATABASE_URL, config.MIGRATION_WAIT_TIMEOUT_MS);
    if (pending.length > 0) {
      console.error(
        `migrations still pending after ${config.MIGRATION_WAIT_TIMEOUT_MS} ms: ${pending.join(", ")}`,
      );
      process.exit(1);
    }
    console.log("the database has every migration of this release");
  } else {
    await migrateAll(directDatabaseUrl(config), {
      lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT_MS,
      statementTimeoutMs: config.MIGRATION_STATEMENT_TIMEOUT_MS,
      lockAttempts: 5,
    });
    console.log(`migrated ${MIGRATIONS.map((set) => set.schema).join(", ")}`);
  }
}
