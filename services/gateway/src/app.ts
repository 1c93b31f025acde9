import {
  type Config,
  createMetricsRegistry,
  type NatsConnection,
  newId,
  type ReadinessCheck,
  type Registry,
} from "@evalp/kit";
import cookie from "@fastify/cookie";
import websocket from "@fastify/websocket";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import { legacyKeyHeaders, lockTtlMs, registerChecks } from "./admission/checks.js";
import { createPrincipalCache } from "./admission/credentials.js";
import { registerAdmission } from "./admission/step.js";
import { createCursorCodec } from "./http/cursor.js";
import { createSeal } from "./idempotency/records.js";
import { gatewayMetrics } from "./metrics.js";
import { createAttemptLimiter, registerPasswordHashLimit } from "./plugins/attempt-limit.js";
import { answerUnroutablePath, registerErrorHandling } from "./plugins/errors.js";
import { registerOpenApi } from "./plugins/openapi.js";
import { registerOps } from "./plugins/ops.js";
import { registerPages } from "./plugins/pages.js";
import { clientRequestId, registerRequestLog } from "./plugins/request-log.js";
import { InterviewHub } from "./realtime/hub.js";
import { selectProtocol } from "./realtime/protocol.js";
import { createSocketSlots } from "./realtime/socket-slots.js";
import type { RedisClient } from "./redis.js";
import type { RouteDeps } from "./routes/deps.js";
import { registerRoutes } from "./routes/register.js";
import type { Upstreams } from "./upstream.js";
import {
  BODY_LIMIT_BYTES,
  NO_FASTIFY_VALIDATION,
  registerValidation,
} from "./validation/request-validator.js";

export type GatewayDeps = {
  config: Config;
  logger: Logger;
  redis: RedisClient;
  upstreams: Upstreams;
  /**
   * NATS, once connected: realtime frames of the interviews whose sockets this gateway holds
   * arrive there. Without it, each socket still gets what its own requests change.
   */
  nats?: Promise<NatsConnection>;
  /** The process's metrics registry, which the upstream clients count in too; by default one of its own. */
  metrics?: Registry;
  /** Where the built web app is (default the checkout's or image's `web/dist`); without it, no page. */
  webDirectory?: string;
};

/**
 * The public door, built from its dependencies and not listening (tests call `inject` or
 * listen on port 0). Hook order is the request's path (docs/architecture.md): request id →
 * deadline → admission (credential proven, windows counted, key claimed) → rate limit (429) →
 * auth (401, 404 across organizations, 403 scope) → body parsing (415, 413, JSON errors) →
 * idempotency (replay, 409 in use, 422 reused) → validation (422, every problem at once) →
 * handler.
 */
export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const registry = deps.metrics ?? createMetricsRegistry("gateway");
  const measured = gatewayMetrics(registry);
  const app = Fastify({
    // Typed as Fastify's logger so plugins see the default instance type; it is the same pino.
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is written by the request-log plugin, with the principal in it.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
    genReqId: (request) => clientRequestId(request.headers["x-request-id"]) ?? newId(),
    bodyLimit: BODY_LIMIT_BYTES,
    // Every part of a request is validated at once (validation/request-validator.ts), never twice.
    schemaController: NO_FASTIFY_VALIDATION,
    return503OnClosing: true,
    // Receiving a request takes at most REQUEST_TIMEOUT_MS (then 408 and the connection closed);
    // its upstream calls are bounded by the same deadline (`callOptions`).
    requestTimeout: deps.config.REQUEST_TIMEOUT_MS,
    // The client's address: the peer's, or (through the proxies TRUSTED_PROXIES names, e.g. the
    // ingress) the one X-Forwarded-For gives; rate limits and attempt limits count it.
    trustProxy: trustedProxies(deps.config.TRUSTED_PROXIES),
    frameworkErrors: answerUnroutablePath,
  });

  registerErrorHandling(app);
  registerRequestLog(app);
  const { REQUEST_TIMEOUT_MS, UPSTREAM_TIMEOUT_MS } = deps.config;
  // A request's upstream calls end by its deadline (`callOptions`). A WebSocket's calls are made
  // for as long as the socket lives: each has UPSTREAM_TIMEOUT_MS, as it always had.
  app.addHook("onRequest", async (request) => {
    if (request.headers.upgrade?.toLowerCase() === "websocket") return;
    request.deadline = { at: Date.now() + REQUEST_TIMEOUT_MS, callMs: UPSTREAM_TIMEOUT_MS };
  });
  await app.register(cookie);
  // The realtime door; upgrades go through the hooks below (auth) before any socket exists.
  await app.register(websocket, {
    options: { maxPayload: BODY_LIMIT_BYTES, handleProtocols: (protocols) => selectProtocol(protocols) },
  });
  await registerOpenApi(app, deps.config.PUBLIC_URL);
  const principals = createPrincipalCache({
    redis: deps.redis,
    channel: `${deps.config.REDIS_KEY_PREFIX}principals:changed`,
    ttlMs: deps.config.PRINCIPAL_CACHE_TTL_MS,
    logger: deps.logger,
  });
  app.addHook("onClose", async () => principals.close());
  // One step fills `request.admission` (admission/step.ts): the credential proven, the rate
  // limit's windows counted and the Idempotency-Key claimed, in one round trip to Redis; the
  // rate limit, auth and idempotency checks (admission/checks.ts) only read it.
  registerAdmission(app, deps.redis, {
    limits: {
      perCredential: deps.config.RATE_LIMIT_PER_MINUTE,
      perAddress: deps.config.RATE_LIMIT_PER_ADDRESS_PER_MINUTE ?? 10 * deps.config.RATE_LIMIT_PER_MINUTE,
      refusalsPerAddress: deps.config.RATE_LIMIT_PER_MINUTE,
    },
    prefix: deps.config.REDIS_KEY_PREFIX,
    lockMs: lockTtlMs(REQUEST_TIMEOUT_MS),
    provers: { upstreams: deps.upstreams, principals, jwtSecret: deps.config.JWT_SECRET },
  });
  registerChecks(
    app,
    deps.redis,
    {
      prefix: deps.config.REDIS_KEY_PREFIX,
      principals,
      legacyKeyHeaders: legacyKeyHeaders(deps.config),
      seal: createSeal(deps.config.JWT_SECRET),
      lockMs: lockTtlMs(REQUEST_TIMEOUT_MS),
    },
    measured,
  );
  registerValidation(app);

  const checks: ReadinessCheck[] = [
    {
      name: "redis",
      check: async () => {
        await deps.redis.ping();
      },
    },
  ];
  app.decorate("ops", registerOps(app, { upstreams: deps.upstreams, checks, registry }));

  const attempts = createAttemptLimiter(deps.redis, deps.config.REDIS_KEY_PREFIX, measured.rateLimited);
  registerPasswordHashLimit(app, attempts);
  const routeDeps: RouteDeps = {
    config: deps.config,
    upstreams: deps.upstreams,
    cursors: createCursorCodec(deps.config.JWT_SECRET),
    attempts,
    hub: new InterviewHub({
      agent: deps.upstreams.interview.agent,
      subjectPrefix: deps.config.REALTIME_SUBJECT_PREFIX,
      logger: deps.logger,
    }),
    sockets: createSocketSlots(deps.redis, {
      prefix: deps.config.REDIS_KEY_PREFIX,
      perSession: deps.config.REALTIME_SOCKETS_PER_SESSION,
      perAddress: deps.config.REALTIME_SOCKETS_PER_ADDRESS,
      refused: measured.rateLimited,
      onError: (error) => deps.logger.warn({ err: error }, "realtime socket slots not updated"),
    }),
    eventStreams: createSocketSlots(deps.redis, {
      prefix: `${deps.config.REDIS_KEY_PREFIX}event-streams:`,
      perSession: deps.config.EVENT_STREAMS_PER_CREDENTIAL,
      perAddress: deps.config.EVENT_STREAMS_PER_ADDRESS,
      refused: measured.rateLimited,
      onError: (error) => deps.logger.warn({ err: error }, "event stream slots not updated"),
      refusals: {
        perSession: {
          reason: "event_streams_per_credential",
          message: "This credential has as many event streams open as it may.",
        },
        perAddress: {
          reason: "event_streams_per_address",
          message: "This address has as many event streams open as it may.",
        },
      },
    }),
  };
  app.addHook("onClose", async () => routeDeps.sockets.close());
  app.addHook("onClose", async () => routeDeps.eventStreams.close());
  measured.observeSockets(() => routeDeps.hub.openSockets());
  app.addHook("onClose", async () => routeDeps.hub.close());
  void deps.nats?.then((nc) => routeDeps.hub.attach(nc));
  await registerRoutes(app, routeDeps);
  // The pages people open from mails and interview links (docs/pages.md), outside the API document.
  await registerPages(app, deps.webDirectory);
  return app;
}

/**
 * Fastify's `trustProxy` from TRUSTED_PROXIES: empty, no proxy (the peer is the client); a
 * number, that many hops of `X-Forwarded-For` trusted; otherwise the addresses or CIDRs of the
 * proxies whose `X-Forwarded-For` is believed (anything else sent in that header is ignored).
 */
export function trustedProxies(setting: string): FastifyServerOptions["trustProxy"] {
  const value = setting.trim();
  if (value === "") return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address: string, hop: number) => hop < hops;
  }
  return value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}
