// Creates the database named in DATABASE_URL when it is missing and applies every service's
// migrations, each into its own schema. `npm run migrate`; `npm start` runs it first.
import { migrations as control } from "@evalp/control";
import { migrations as interview } from "@evalp/interview";
import { ensureDatabase, loadConfig, migrate } from "@evalp/kit";
import { migrations as platform } from "@evalp/platform";
import { migrations as webhooks } from "@evalp/webhooks";

export const MIGRATIONS = [control, platform, interview, webhooks];

export async function migrateAll(databaseUrl) {
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl, MIGRATIONS);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = loadConfig();
  await migrateAll(config.DATABASE_URL);
  console.log(`migrated ${MIGRATIONS.map((set) => set.schema).join(", ")}`);
}
