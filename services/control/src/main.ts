import {
  auditRoute,
  createLogger,
  createOutboxPublisher,
  createPool,
  createShutdownManager,
  loadConfig,
  logRuntime,
  serveService,
} from "@evalp/kit";
import { type AuditConsumer, createAuditConsumer } from "./audit-consumer.js";
import { createBackgroundTasks } from "./background.js";
import { createMailer } from "./mailer.js";
import { controlService, SCHEMA } from "./server.js";
import { createUsageClients } from "./usage-clients.js";

const config = loadConfig();
const logger = createLogger("control", config.LOG_LEVEL);
logRuntime(logger);
const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
const pool = createPool({ databaseUrl: config.DATABASE_URL, schema: SCHEMA, max: config.DATABASE_POOL_SIZE });
shutdown.register("postgres", () => pool.end());
const tasks = createBackgroundTasks(logger);
shutdown.register("background tasks", () => tasks.drain());
const mailer = createMailer({ smtpUrl: config.SMTP_URL, mailDir: config.MAIL_DIR, logger });
const running = await serveService(
  controlService({ pool, config, logger, mailer, tasks, usage: createUsageClients(config) }),
  {
    logger,
    host: config.HOST,
    rpcPort: config.SERVICE_PORT ?? 8081,
    opsPort: config.OPS_PORT ?? 9081,
    maxConnectionAgeMs: config.RPC_MAX_CONNECTION_AGE_MS,
    serviceTokenSecrets: config.SERVICE_TOKEN_SECRETS,
  },
);
const publisher = createOutboxPublisher({ name: "control", config, pool, logger });
let audit: AuditConsumer | null = null;
// After the servers have closed (last registered runs first), the relay publishes what it holds.
shutdown.register("event path", async () => {
  await audit?.stop();
  await publisher.stop();
});
shutdown.register("servers", () => running.close());
shutdown.listen();
logger.info({ rpc_port: running.rpcPort, ops_port: running.opsPort }, "control listening");
// Events wait in the outbox until NATS answers; the API does not depend on it.
const nats = await publisher.start();
audit = createAuditConsumer({ pool, nc: nats, route: auditRoute(config), logger });
await audit.start();
