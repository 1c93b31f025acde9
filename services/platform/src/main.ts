import {
  createLogger,
  createOutboxPublisher,
  createPool,
  createShutdownManager,
  loadConfig,
  logRuntime,
  serveService,
} from "@evalp/kit";
import { createControlClients, createDeliveryClient } from "./control-clients.js";
import { platformService, SCHEMA } from "./server.js";

const config = loadConfig();
const logger = createLogger("platform", config.LOG_LEVEL);
logRuntime(logger);
const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
const pool = createPool({ databaseUrl: config.DATABASE_URL, schema: SCHEMA, max: config.DATABASE_POOL_SIZE });
shutdown.register("postgres", () => pool.end());
const running = await serveService(
  platformService({
    pool,
    logger,
    config,
    control: createControlClients(config),
    deliveries: createDeliveryClient(config),
  }),
  {
    logger,
    host: config.HOST,
    rpcPort: config.SERVICE_PORT ?? 8082,
    opsPort: config.OPS_PORT ?? 9082,
    maxConnectionAgeMs: config.RPC_MAX_CONNECTION_AGE_MS,
    serviceTokenSecrets: config.SERVICE_TOKEN_SECRETS,
  },
);
const publisher = createOutboxPublisher({ name: "platform", config, pool, logger });
// After the servers have closed (last registered runs first), the relay publishes what it holds.
shutdown.register("outbox relay", () => publisher.stop());
shutdown.register("servers", () => running.close());
shutdown.listen();
logger.info({ rpc_port: running.rpcPort, ops_port: running.opsPort }, "platform listening");
// Events and audit records wait in the outbox until NATS answers.
await publisher.start();
