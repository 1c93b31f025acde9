import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrations as controlMigrations, createControl } from "@evalp/control";
import { createGateway, type GatewayProcess, type RedisClient } from "@evalp/gateway";
import { createInterview, migrations as interviewMigrations } from "@evalp/interview";
import {
  type ComposeProcess,
  type Config,
  connectNats,
  createLogger,
  createPool,
  generateServiceKeySet,
  loadConfig,
  type NatsConnection,
  type NatsNames,
  type NatsUser,
  type Pool,
  type ServiceKeySet,
  type ServiceProcess,
  schemaRoleUrl,
} from "@evalp/kit";
import { createPlatform, migrations as platformMigrations } from "@evalp/platform";
import {
  createTestDatabase,
  natsAuthorization,
  startNatsServer,
  uniqueRedisPrefix,
  uniqueSuffix,
} from "@evalp/testing";
import { createWebhooks, migrations as webhooksMigrations } from "@evalp/webhooks";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll } from "vitest";
import { type ApiClient, apiClient } from "./client.js";
import { deleteKeys } from "./redis.js";

export const MIGRATIONS = [controlMigrations, platformMigrations, interviewMigrations, webhooksMigrations];

/** One running platform for a test file: its own database and Redis prefix, real services. */
export type Stack = {
  /** The first gateway's base URL (the realtime doors it hands out are its). */
  url: string;
  /** Both gateways' base URLs: the API's tests alternate between them, as a balancer does. */
  urls: string[];
  /** The first gateway's ops server (`/healthz`, `/readyz`, `/metrics`). */
  opsUrl: string;
  /** Every process's ops server, the first gateway's as `gateway`. */
  opsUrls: Record<"gateway" | "control" | "platform" | "interview" | "webhooks", string>;
  /**
   * The stack's configuration. Its `developmentServiceKeys` hold every process's private key, so
   * that a test can call a plane as any of them; each process was given only its own.
   */
  config: Config;
  /** The key pairs of the stack's processes, made for it. */
  keys: ServiceKeySet;
  /** The stack's database, as the administrator (the planes connect as their schemas' roles). */
  databaseUrl: string;
  /**
   * A pool of the test's own as the administrator (search path `control`), for asserting what was
   * (not) written: it reads every schema, which no plane's role may.
   */
  db: Pool;
  /** The pool of any service's schema, for the same. */
  pool(schema: "control" | "platform" | "interview" | "webhooks"): Pool;
  redis: RedisClient;
  /**
   * The test's own connection to the stack's NATS server (a user without limits); its streams
   * are named in `config`.
   */
  nats: NatsConnection;
  /** A further connection as one of the platform's users, within that user's permissions. */
  connectNats(user: NatsUser): Promise<NatsConnection>;
  /** Stops one upstream service, as an outage would. */
  stop(service: "control"): Promise<void>;
  close(): Promise<void>;
};

/**
 * Starts the gateway and the four services in this process on free ports, each on real
 * Postgres (a fresh database cloned from the migrated template) and real Redis.
 */
export async function startStack(
  env: Record<string, string> = {},
  options: { logLines?: string[] } = {},
): Promise<Stack> {
  const database = await createTestDatabase(MIGRATIONS);
  // With `logLines`, every process's log lines are kept there for the test to read.
  const sink = options.logLines;
  const logger = sink
    ? createLogger("test", "info", { write: (line: string) => void sink.push(line) })
    : createLogger("test", process.env.TEST_LOG_LEVEL ?? "silent");
  // A key pair for each process, made for this stack: each process signs with its own.
  const keys = generateServiceKeySet();
  // One configuration for every process of the stack, each with its own private key and Postgres
  // role (`configOf`); the services' addresses are filled in once they listen (`settle`), and
  // clients between services read them at their first call.
  const config: Config = loadConfig({
    NODE_ENV: "test",
    DATABASE_URL: database.url,
    // The run's Redis (the default unless REDIS_URL names another), each stack under a prefix of its own.
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    REDIS_KEY_PREFIX: uniqueRedisPrefix(),
    JWT_SECRET: "test-secret-test-secret-test-secret-0123456789",
    WEBHOOK_SECRETS_KEYS: "test:test-webhook-secrets-key-0123456789abcdef",
    SERVICE_PUBLIC_KEYS: keys.public,
    DATABASE_POOL_SIZE: "4",
    // At the end of a test file its stack stops at once: webhook attempts in flight are cut off.
    SHUTDOWN_GRACE_MS: "0",
    MAIL_DIR: mkdtempSync(join(tmpdir(), "evalp-mail-")),
    // JetStream forbids streams with overlapping subjects: each stack has streams of its own.
    ...streamNames(uniqueSuffix()),
    ...env,
  });
  // A NATS server of the stack's own with production's users and permissions: each process
  // connects as itself, so a publish or subscription outside its permissions fails the tests.
  const authorization = natsAuthorization(config);
  const natsServer = await startNatsServer({ authorization });
  config.NATS_URL = natsServer.url;
  const connections: NatsConnection[] = [];
  const connectAs = async (user: NatsUser) => {
    const nc = await connectNats(
      { NATS_URL: natsServer.url, ...authorization.credentials(user) },
      user,
      logger,
    );
    connections.push(nc);
    return nc;
  };
  const nats = await connect({ servers: natsServer.url, name: "test-harness", ...authorization.harness });
  const configs: Config[] = [config];
  /** A process's configuration: its own private key and, for a plane, its own Postgres role. */
  const configOf = (name: NatsUser): Config => {
    const own: Config = {
      ...config,
      SERVICE_KEY: keys.private[name] ?? "",
      ...(name === "gateway" ? {} : { DATABASE_URL: schemaRoleUrl(database.url, name) }),
    };
    configs.push(own);
    return own;
  };
  /** Settings known once the processes listen, for every process. */
  const settle = (settings: Partial<Config>) => {
    for (const each of configs) Object.assign(each, settings);
  };
  // Every process as its main.ts composes it, on free ports, as its own NATS user, key and role.
  const start = <P extends ServiceProcess | GatewayProcess>(name: NatsUser, compose: ComposeProcess<P>) =>
    compose(configOf(name), logger.child({ service: name }), {
      ports: { port: 0, opsPort: 0 },
      nats: authorization.credentials(name),
    });
  const services = {
    control: await start("control", createControl),
    platform: await start("platform", createPlatform),
    interview: await start("interview", createInterview),
    webhooks: await start("webhooks", createWebhooks),
  };
  const ports: Record<string, number> = {};
  const opsUrls: Record<string, string> = {};
  for (const [name, service] of Object.entries(services)) {
    const listening = await service.listen();
    ports[name] = listening.port;
    opsUrls[name] = `http://127.0.0.1:${listening.opsPort}`;
  }
  const at = (name: string) => `http://127.0.0.1:${ports[name]}`;
  settle({
    CONTROL_URL: at("control"),
    PLATFORM_URL: at("platform"),
    INTERVIEW_URL: at("interview"),
    WEBHOOKS_URL: at("webhooks"),
  });
  // The event path of docs/webhooks.md: each emitting plane's outbox relay (events and audit records),
  // control's audit consumer, and the webhooks plane's workers.
  for (const service of Object.values(services)) await service.connect();
  const pools = new Map<string, Pool>(
    Object.entries(services).map(([name, service]) => [name, service.pool]),
  );
  const pool = (schema: string) => {
    const created = pools.get(schema) ?? createPool({ databaseUrl: database.url, schema, max: 4 });
    pools.set(schema, created);
    return created;
  };
  const admin = createPool({ databaseUrl: database.url, schema: "control", max: 4 });
  // Two gateways, each with clients of its own, as two replicas behind a balancer.
  const gateways: Array<{ process: GatewayProcess; url: string; opsUrl: string }> = [];
  for (let i = 0; i < 2; i++) {
    const gateway = await start("gateway", createGateway);
    // The client refuses commands until it is connected (no offline queue); tests use it at once.
    if (gateway.redis.status !== "ready") await once(gateway.redis, "ready");
    const listening = await gateway.listen();
    gateways.push({
      process: gateway,
      url: `http://127.0.0.1:${listening.port}`,
      opsUrl: `http://127.0.0.1:${listening.opsPort}`,
    });
  }
  const [first] = gateways;
  if (!first) throw new Error("no gateway");
  const { url } = first;
  const redis = first.process.redis;
  // The interview plane hands out the realtime door as `server_url`: this gateway's.
  settle({ REALTIME_URL: `${url.replace(/^http/, "ws")}/v1/participant/realtime` });
  return {
    url,
    urls: gateways.map((gateway) => gateway.url),
    opsUrl: first.opsUrl,
    opsUrls: { ...opsUrls, gateway: first.opsUrl } as Stack["opsUrls"],
    config: { ...config, PUBLIC_URL: url, developmentServiceKeys: keys.private },
    keys,
    databaseUrl: database.url,
    db: admin,
    pool,
    redis,
    nats,
    connectNats: connectAs,
    async stop(name) {
      await services[name].stopServing();
    },
    async close() {
      await deleteKeys(redis, `${config.REDIS_KEY_PREFIX}*`);
      for (const gateway of gateways) await gateway.process.shutdown.shutdown("test over");
      for (const service of Object.values(services)) await service.shutdown.shutdown("test over");
      for (const nc of [...connections, nats]) await nc.close();
      await natsServer.close();
      await Promise.all([...pools.entries()].filter(([name]) => !(name in services)).map(([, p]) => p.end()));
      await admin.end();
      await database.drop();
    },
  };
}

/** The JetStream names of one stack: its own streams and subject prefixes. */
export function streamNames(suffix: string): NatsNames {
  return {
    EVENTS_STREAM: `EVENTS_${suffix}`,
    EVENTS_SUBJECT_PREFIX: `events_${suffix}`,
    WEBHOOKS_STREAM: `WEBHOOKS_${suffix}`,
    WEBHOOKS_SUBJECT_PREFIX: `webhooks_${suffix}`,
    AUDIT_STREAM: `AUDIT_${suffix}`,
    AUDIT_SUBJECT_PREFIX: `audit_${suffix}`,
    REALTIME_SUBJECT_PREFIX: `realtime_${suffix}`,
  };
}

/**
 * Registers a stack for the test file around its tests (started before the first, closed after
 * the last) and hands back a holder filled in by then.
 */
export function useStack(env: Record<string, string> = {}): { stack: Stack; api: ApiClient } {
  const holder = {} as { stack: Stack; api: ApiClient };
  beforeAll(async () => {
    holder.stack = await startStack(env);
    holder.api = apiClient(holder.stack.urls);
  });
  afterAll(async () => {
    await holder.stack?.close();
  });
  return holder;
}
