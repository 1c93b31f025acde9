import {
  connectNats,
  createLogger,
  createPool,
  createShutdownManager,
  loadConfig,
  logRuntime,
  type NatsConnection,
  pingNats,
  serveService,
} from "@evalp/kit";
import { createControlClients } from "./control-clients.js";
import { createEnvironmentScope } from "./environment-scope.js";
import { SCHEMA, webhooksService } from "./server.js";
import { createWebhookWorkers } from "./workers.js";

const config = loadConfig();
const logger = createLogger("webhooks", config.LOG_LEVEL);
logRuntime(logger);
const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
const pool = createPool({ databaseUrl: config.DATABASE_URL, schema: SCHEMA, max: config.DATABASE_POOL_SIZE });
shutdown.register("postgres", () => pool.end());
const workers = createWebhookWorkers({ pool, logger, config, databaseUrl: config.DATABASE_URL });
const control = createControlClients(config);
let nats: NatsConnection | null = null;
const running = await serveService(
  webhooksService(
    {
      pool,
      logger,
      config,
      control,
      requireEnvironment: createEnvironmentScope(control),
      wake: workers.wake,
    },
    [
      {
        name: "nats",
        // Deliveries already stored go on, and so do the plane's calls; new events wait in the stream.
        degrades: true,
        check: async () => {
          if (!nats) throw new Error("nats not connected yet");
          await pingNats(nats);
        },
      },
    ],
  ),
  {
    logger,
    host: config.HOST,
    rpcPort: config.SERVICE_PORT ?? 8084,
    opsPort: config.OPS_PORT ?? 9084,
    maxConnectionAgeMs: config.RPC_MAX_CONNECTION_AGE_MS,
    serviceTokenSecrets: config.SERVICE_TOKEN_SECRETS,
  },
);
// At shutdown (last registered first): the servers stop taking calls, then the workers stop
// (attempts in flight get half the grace) and NATS drains, then the pool ends.
shutdown.register("workers", async () => {
  await workers.stop(Math.floor(config.SHUTDOWN_GRACE_MS / 2));
  await nats?.drain();
});
shutdown.register("servers", () => running.close());
shutdown.listen();
workers.start();
logger.info({ rpc_port: running.rpcPort, ops_port: running.opsPort }, "webhooks listening");
// NATS may come up after this process: RPCs and deliveries already stored are served meanwhile.
nats = await connectNats(config, "webhooks", logger);
await workers.connect(nats);
