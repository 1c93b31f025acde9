// After a restore (docs/operations.md#backup-and-restore): every outbox row published since
// --since whose message its stream lacks is stamped unpublished again, for the services' relays
// (which must be running) to publish once more with its own id. Safe to run twice.
//
//   node scripts/reconcile-outbox.mjs --since 2026-01-31T09:00:00Z
//
// Connects to DATABASE_DIRECT_URL (or DATABASE_URL) and to NATS_URL as NATS_USER: a user that
// may read the streams (an ordered consumer on EVENTS, AUDIT and WEBHOOKS), which the services'
// own users may not.
import { migrations as control } from "@evalp/control";
import { migrations as interview } from "@evalp/interview";
import {
  auditRoute,
  configSchema,
  connectNats,
  createLogger,
  createPool,
  directDatabaseUrl,
  eventsRoute,
  reconcileOutbox,
  webhooksRoute,
} from "@evalp/kit";
import { migrations as platform } from "@evalp/platform";
import { migrations as webhooks } from "@evalp/webhooks";

const at = process.argv.indexOf("--since");
const since = new Date(at > 0 ? (process.argv[at + 1] ?? "") : "");
if (Number.isNaN(since.getTime())) {
  console.error("usage: node scripts/reconcile-outbox.mjs --since <ISO time before the restore's target>");
  process.exit(2);
}
const config = configSchema.parse(process.env);
const logger = createLogger("reconcile-outbox", config.LOG_LEVEL);
const nc = await connectNats(config, "reconcile-outbox", logger);
try {
  for (const set of [control, platform, interview, webhooks]) {
    const pool = createPool({ databaseUrl: directDatabaseUrl(config), schema: set.schema, max: 2 });
    try {
      // The routes the schema's relay publishes to (the webhooks plane's own stream: webhooks only).
      const routes = [eventsRoute(config), auditRoute(config)];
      if (set.schema === webhooks.schema) routes.push(webhooksRoute(config));
      const result = await reconcileOutbox({ pool, nc, routes, since });
      console.log(
        `${set.schema}: ${result.checked} published rows checked, ${result.republished.length} to publish again`,
      );
    } finally {
      await pool.end();
    }
  }
} finally {
  await nc.drain();
}
