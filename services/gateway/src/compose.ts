import {
  type ComposeProcess,
  connectNats,
  createMetricsRegistry,
  createShutdownManager,
  inService,
  listen,
  type Process,
  registerTelemetry,
  requireJwtSecret,
} from "@evalp/kit";
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import { createRedis, type RedisClient } from "./redis.js";
import { createUpstreams } from "./upstream.js";

/** The gateway's process, with its app and its Redis client (tests read both). */
export type GatewayProcess = Process & { app: FastifyInstance; redis: RedisClient };

/**
 * The gateway process: the public API in front of the services, its Redis (rate limits,
 * idempotency) and its NATS connection (realtime frames of other gateways' sockets).
 */
export const createGateway: ComposeProcess<GatewayProcess> = async (config, logger, options = {}) => {
  // It signs or verifies with the JWT secret: without one (production) it does not start.
  requireJwtSecret(config);
  const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
  registerTelemetry(shutdown, config, "gateway");
  const redis = createRedis(config.REDIS_URL);
  shutdown.register("redis", async () => {
    await redis.quit();
  });
  // One registry for the process: its requests, its calls to the planes, its plugins' counts.
  const metrics = createMetricsRegistry("gateway");
  const upstreams = createUpstreams(config, metrics);
  // Realtime frames of other gateways' sockets come over NATS; the API does not wait for it.
  const nats = inService("gateway", () => connectNats({ ...config, ...options.nats }, "gateway", logger));
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
  const app = await buildApp({ config, logger, redis, upstreams, nats, metrics });
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
  const ports = options.ports ?? { port: config.PORT, opsPort: config.OPS_PORT ?? 9080 };
  return {
    name: "gateway",
    shutdown,
    app,
    redis,
    // What the servers start keeps the process's name (telemetry.ts).
    listen: () =>
      inService("gateway", async () => {
        await app.listen({ port: ports.port, host: config.HOST });
        const opsPort = await listen(app.ops, ports.opsPort, config.HOST);
        return { port: (app.server.address() as { port: number }).port, opsPort };
      }),
    async connect() {
      await nats;
    },
  };
};
