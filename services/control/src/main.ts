import {
  connectNats,
  createLogger,
  createOutboxRelay,
  createPool,
  createShutdownManager,
  eventsRoute,
  loadConfig,
  type NatsConnection,
  type OutboxRelay,
  serveService,
} from "@evalp/kit";
import { createBackgroundTasks } from "./background.js";
import { createMailer } from "./mailer.js";
import { controlService, SCHEMA } from "./server.js";
import { createUsageClients } from "./usage-clients.js";

const config = loadConfig();
const logger = createLogger("control", config.LOG_LEVEL);
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
  },
);
let nats: NatsConnection | null = null;
let relay: OutboxRelay | null = null;
// After the servers have closed (last registered runs first), the relay publishes what it holds.
shutdown.register("outbox relay", async () => {
  await relay?.stop();
  await nats?.drain();
});
shutdown.register("servers", () => running.close());
shutdown.listen();
logger.info({ rpc_port: running.rpcPort, ops_port: running.opsPort }, "control listening");
// Events wait in the outbox until NATS answers; the API does not depend on it.
nats = await connectNats(config.NATS_URL, "control", logger);
relay = createOutboxRelay({
  pool,
  nc: nats,
  routes: [eventsRoute(config)],
  logger,
  databaseUrl: config.DATABASE_URL,
});
await relay.start();
