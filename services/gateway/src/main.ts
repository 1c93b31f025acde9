import {
  connectNats,
  createLogger,
  createShutdownManager,
  listen,
  loadConfig,
  logRuntime,
  requireJwtSecret,
} from "@evalp/kit";
import { buildApp } from "./app.js";
import { createRedis } from "./redis.js";
import { createUpstreams } from "./upstream.js";

const config = loadConfig();
// It signs or verifies with the JWT secret: without one (production) it does not start.
requireJwtSecret(config);
const logger = createLogger("gateway", config.LOG_LEVEL);
logRuntime(logger);
const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
const redis = createRedis(config.REDIS_URL);
shutdown.register("redis", async () => {
  await redis.quit();
});
const upstreams = createUpstreams(config);
// Realtime frames of other gateways' sockets come over NATS; the API does not wait for it.
const nats = connectNats(config, "gateway", logger);
let natsConnected: Awaited<typeof nats> | null = null;
void nats.then((nc) => {
  natsConnected = nc;
});
shutdown.register("nats", async () => {
  await natsConnected?.drain();
});
// The HTTP/2 sessions to the services are not aborted at shutdown: the services send GOAWAY as
// they drain too, and aborting a session that is receiving one makes connect-node emit an
// unhandled error (exit 1). They hold no work once the server has drained, and the process exits.
const app = await buildApp({ config, logger, redis, upstreams, nats });
// Fastify's close stops accepting, answers 503 to new requests and waits for in-flight ones.
// Node ends only the keep-alive connections idle at that moment: one whose request was still in
// flight stayed open after its answer for keepAliveTimeout (72 s), so the drain missed its
// deadline and the process exited 1. Connections are ended as soon as they fall idle instead.
shutdown.register("http", async () => {
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
  }
});
await app.listen({ port: config.PORT, host: config.HOST });
const opsPort = await listen(app.ops, config.OPS_PORT ?? 9080, config.HOST);
shutdown.listen();
logger.info({ url: config.PUBLIC_URL, ops_port: opsPort }, "gateway listening");
