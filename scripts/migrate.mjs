// Creates the database named in DATABASE_URL when it is missing and applies every service's
// migrations, each into its own schema. `npm run migrate`; `npm start` runs it first. Both connect
// to DATABASE_DIRECT_URL when it is set: the migrations' advisory lock is held by a session, which
// a transaction pooler would not keep.
import { migrations as control } from "@evalp/control";
import { migrations as interview } from "@evalp/interview";
import { configSchema, directDatabaseUrl, ensureDatabase, migrate } from "@evalp/kit";
import { migrations as platform } from "@evalp/platform";
import { migrations as webhooks } from "@evalp/webhooks";

export const MIGRATIONS = [control, platform, interview, webhooks];

export async function migrateAll(databaseUrl) {
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl, MIGRATIONS);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // Only the database is needed to migrate (no secret), so a migration job needs no JWT_SECRET.
  const config = configSchema.pick({ DATABASE_URL: true, DATABASE_DIRECT_URL: true }).parse(process.env);
  await migrateAll(directDatabaseUrl(config));
  console.log(`migrated ${MIGRATIONS.map((set) => set.schema).join(", ")}`);
}
