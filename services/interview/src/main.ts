import {
  createLogger,
  createOutboxPublisher,
  createPool,
  createShutdownManager,
  loadConfig,
  logRuntime,
  requireJwtSecret,
  serveService,
} from "@evalp/kit";
import { createAgentSweeper } from "./agent/connections.js";
import { createControlClients, createPlatformClients } from "./clients.js";
import { createRealtime } from "./realtime.js";
import { interviewService, SCHEMA } from "./server.js";

const config = loadConfig();
// It signs or verifies with the JWT secret: without one (production) it does not start.
requireJwtSecret(config);
const logger = createLogger("interview", config.LOG_LEVEL);
logRuntime(logger);
const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
const pool = createPool({ databaseUrl: config.DATABASE_URL, schema: SCHEMA, max: config.DATABASE_POOL_SIZE });
shutdown.register("postgres", () => pool.end());
const realtime = createRealtime({ subjectPrefix: config.REALTIME_SUBJECT_PREFIX, logger });
const deps = {
  pool,
  logger,
  config,
  control: createControlClients(config),
  platform: createPlatformClients(config),
  realtime,
};
const sweeper = createAgentSweeper(deps, realtime.changed);
shutdown.register("agent sweeper", () => sweeper.stop());
const running = await serveService(interviewService(deps), {
  logger,
  host: config.HOST,
  rpcPort: config.SERVICE_PORT ?? 8083,
  opsPort: config.OPS_PORT ?? 9083,
  maxConnectionAgeMs: config.RPC_MAX_CONNECTION_AGE_MS,
  serviceTokenSecrets: config.SERVICE_TOKEN_SECRETS,
});
const publisher = createOutboxPublisher({ name: "interview", config, pool, logger });
// After the servers have closed (last registered runs first), the relay publishes what it holds.
shutdown.register("outbox relay", () => publisher.stop());
shutdown.register("servers", () => running.close());
shutdown.listen();
logger.info({ rpc_port: running.rpcPort, ops_port: running.opsPort }, "interview listening");
sweeper.start();
// `interview.started` / `interview.completed` wait in the outbox until NATS answers; realtime
// frames go out once it does.
realtime.attach(await publisher.start());
