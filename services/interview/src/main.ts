import { createLogger, createPool, createShutdownManager, loadConfig, serveService } from "@evalp/kit";
import { interviewService, SCHEMA } from "./server.js";

const config = loadConfig();
const logger = createLogger("interview", config.LOG_LEVEL);
const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
const pool = createPool({ databaseUrl: config.DATABASE_URL, schema: SCHEMA, max: config.DATABASE_POOL_SIZE });
shutdown.register("postgres", () => pool.end());
const running = await serveService(interviewService({ pool, logger }), {
  logger,
  host: config.HOST,
  rpcPort: config.SERVICE_PORT ?? 8083,
  opsPort: config.OPS_PORT ?? 9083,
});
shutdown.register("servers", () => running.close());
shutdown.listen();
logger.info({ rpc_port: running.rpcPort, ops_port: running.opsPort }, "interview listening");
