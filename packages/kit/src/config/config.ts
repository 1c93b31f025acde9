import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { parseSealingSecrets, type SealingSecret } from "../auth/sealing.js";
import {
  generateServiceKeySet,
  parseServiceKey,
  parseServicePublicKeys,
  type ServiceKeySet,
  type ServiceSigningKey,
  type ServiceTokenVerifier,
} from "../auth/service-tokens.js";
import { NATS_USERS } from "../events/nats-permissions.js";
import { parseResourceAttributes } from "../telemetry/semconv.js";
import { parseRedisUrl } from "./redis-url.js";
import { parseServiceAddress } from "./service-endpoints.js";

/** The development default secret is written here so that restarts keep tokens valid. */
const DEV_SECRET_FILE = "jwt-secret";
const DEV_WEBHOOK_SECRETS_KEY_FILE = "webhook-secrets-key";
/** The development key pairs of the processes (service-tokens.ts), made once per VAR_DIR. */
const DEV_SERVICE_KEYS_FILE = "service-keys.json";

/** A service's address (`createEndpointSet`): one http(s) URL, or several separated by commas. */
const serviceAddress = z.string().refine(
  (value) => {
    try {
      return parseServiceAddress(value).every((url) => url.protocol === "http:" || url.protocol === "https:");
    } catch {
      return false;
    }
  },
  { message: "Expected one http(s) URL or several separated by commas" },
);

/**
 * One mailbox for a mail header: `name@example.com` or `Display Name <name@example.com>`. No line
 * breaks (a header could be forged with one) and no second address.
 */
const mailbox = z
  .string()
  .regex(
    /^(?:[^<>@,;\r\n]+<[^\s<>@,;]+@[^\s<>@,;]+\.[^\s<>@,;]+>|[^\s<>@,;]+@[^\s<>@,;]+\.[^\s<>@,;]+)$/,
    "Expected one mailbox: name@example.com or Name <name@example.com>",
  );

const booleanString = z
  .enum(["true", "false", "1", "0"])
  .transform((value) => value === "true" || value === "1");

/**
 * Every setting of the platform, one schema for all processes (docs/configuration.md). Each has a
 * development default that works on one machine; `NODE_ENV=production` refuses the
 * development secret. Parsed once in each `main.ts` and passed down.
 */
export const configSchema = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  HOST: z.string().default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** A service's RPC port and ops port; each service has its own defaults (docs/configuration.md). */
  SERVICE_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  OPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  PUBLIC_URL: z.string().url().optional(),
  /** The realtime door participants get as `server_url` (docs/interview.md#the-realtime-doors); default: under PUBLIC_URL. */
  REALTIME_URL: z.string().url().optional(),
  /** How long an agent socket may stay closed before the interview pauses (docs/interview.md#the-agent-protocol: 10 s). */
  AGENT_DISCONNECT_PAUSE_MS: z.coerce.number().int().min(0).default(10_000),
  DATABASE_URL: z.string().default("postgres://127.0.0.1:5432/evalp"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * Straight to the primary, for what needs a session of its own: the outbox relay's LISTEN and
   * the migrations' advisory lock. Set it when DATABASE_URL goes through a transaction pooler
   * (PgBouncer), which hands each transaction any server connection and so loses both.
   * Default: DATABASE_URL (directDatabaseUrl).
   */
  DATABASE_DIRECT_URL: z.string().min(1).optional(),
  /**
   * The migrations' limits (docs/configuration.md#migrations): how long a statement may wait for
   * a lock before the file is rolled back and tried again, and how long it may run.
   */
  MIGRATION_LOCK_TIMEOUT_MS: z.coerce.number().int().min(1).default(5_000),
  MIGRATION_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(1).default(60_000),
  /** How long a pod of a new release waits for the migration Job (`migrate.mjs --wait`). */
  MIGRATION_WAIT_TIMEOUT_MS: z.coerce.number().int().min(0).default(600_000),
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  /**
   * The process's NATS user and password (nats-permissions.ts: each process is a user of its own,
   * allowed only its subjects). Both or neither; required in production.
   */
  NATS_USER: z.enum(NATS_USERS).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  /** Replicas of the streams the platform creates (3 on a 3-node cluster, so a node can be lost). */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /**
   * JetStream names. Events go to stream EVENTS_STREAM on `<EVENTS_SUBJECT_PREFIX>.<environment>.<type>`;
   * the webhooks plane's own messages (dead letters) to WEBHOOKS_STREAM on `<WEBHOOKS_SUBJECT_PREFIX>.…`.
   * Overridable so that several deployments (or test runs) can share one NATS server.
   */
  EVENTS_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("EVENTS"),
  EVENTS_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("events"),
  WEBHOOKS_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("WEBHOOKS"),
  WEBHOOKS_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("webhooks"),
  /**
   * The limits of each stream (docs/configuration.md#stream-limits): at most MAX_BYTES bytes, each
   * message kept MAX_AGE_DAYS. A full stream refuses new messages (discard policy `new`), so the
   * outbox keeps its rows until space frees rather than the stream dropping undelivered ones.
   * Applied to existing streams at every start.
   */
  EVENTS_STREAM_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 ** 3),
  EVENTS_STREAM_MAX_AGE_DAYS: z.coerce.number().positive().default(7),
  WEBHOOKS_STREAM_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(256 * 1024 ** 2),
  WEBHOOKS_STREAM_MAX_AGE_DAYS: z.coerce.number().positive().default(7),
  AUDIT_STREAM_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 ** 3),
  AUDIT_STREAM_MAX_AGE_DAYS: z.coerce.number().positive().default(7),
  /** Audit records of the planes other than control go to AUDIT_STREAM on `<AUDIT_SUBJECT_PREFIX>.<organization>`. */
  AUDIT_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("AUDIT"),
  AUDIT_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("audit"),
  /**
   * Core NATS (no stream): the interview plane publishes what an interview's open sockets must
   * see on `<REALTIME_SUBJECT_PREFIX>.<evaluation_id>`, and every gateway relays it to the sockets it holds.
   */
  REALTIME_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("realtime"),
  /** One server, a Sentinel set or a Cluster (redis-url.ts; docs/configuration.md has the forms). */
  REDIS_URL: z
    .string()
    .default("redis://127.0.0.1:6379")
    .superRefine((value, context) => {
      try {
        parseRedisUrl(value);
      } catch (error) {
        context.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
      }
    }),
  /** Prefix of every Redis key, so that several deployments (or test runs) can share one Redis. */
  REDIS_KEY_PREFIX: z.string().default("evalp:"),
  SMTP_URL: z.string().optional(),
  /**
   * The sender of invitations and password resets. Required with SMTP_URL: providers refuse mail
   * from a domain the account has not verified, so no made-up default is sent through them.
   */
  MAIL_FROM: mailbox.optional(),
  /** Where replies to those mails go; unset: to MAIL_FROM. */
  MAIL_REPLY_TO: mailbox.optional(),
  MAIL_DIR: z.string().default("var/mail"),
  VAR_DIR: z.string().default("var"),
  /** Delays between delivery attempts, comma-separated milliseconds; unset: the schedule of docs/webhooks.md. */
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .regex(/^\s*\d+\s*(,\s*\d+\s*)*$/, "a comma-separated list of milliseconds")
    .optional(),
  WEBHOOK_ALLOW_PRIVATE: booleanString.optional(),
  /** How long one delivery attempt may take (docs/webhooks.md: 10 s). */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Delivery attempts in flight at once per webhooks process, and per endpoint. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
  /**
   * The keys that seal webhook signing secrets at rest (kit sealing.ts, docs/operations.md#webhook-secrets-key):
   * `kid:secret` pairs, comma-separated, the first seals, every one opens. Required in production
   * by the webhooks process; generated into VAR_DIR in development.
   */
  WEBHOOK_SECRETS_KEYS: z.string().optional(),
  /**
   * Tracing (telemetry.ts): spans are exported over OTLP/HTTP to `<endpoint>/v1/traces` when this
   * is set; unset, no tracing SDK is loaded at all.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** The `service.name` of the spans; unset: the process's name (`gateway`, `control`, …). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** How long finished spans wait to be exported together. */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(0).default(5_000),
  /**
   * More attributes of the spans' resource (semconv.ts): `key=value` pairs separated by commas,
   * percent-encoded, as the OpenTelemetry specification defines them (`deployment.environment.name=prod`).
   */
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .optional()
    .refine((value) => parseResourceAttributes(value) !== null, {
      message: "Expected key=value pairs separated by commas, percent-encoded",
    }),
  /**
   * Which attribute names the spans carry (semconv.ts): `http/dup`, `rpc/dup` add the older
   * experimental HTTP and RPC names to the current ones; unset, `http` or `rpc`: the current only.
   */
  OTEL_SEMCONV_STABILITY_OPT_IN: z.string().optional(),
  /** The pod, its namespace and its node (the Kubernetes downward API), on the spans' resource. */
  K8S_POD_NAME: z.string().min(1).optional(),
  K8S_NAMESPACE_NAME: z.string().min(1).optional(),
  K8S_NODE_NAME: z.string().min(1).optional(),
  SIGNUP_ENABLED: booleanString.default(true),
  LEGACY_API_KEYS: z.string().default(""),
  /**
   * When legacy keys were deprecated: every answer to one carries it as `Deprecation:
   * @<epoch seconds>` (RFC 9745), with a `Link` to the migration guide.
   */
  LEGACY_API_KEYS_DEPRECATED_AT: z.coerce.date().default(new Date("2026-01-01T00:00:00Z")),
  /** When legacy keys stop working, announced on every answer to one as `Sunset` (RFC 8594); unset: none. */
  LEGACY_API_KEYS_SUNSET_AT: z.coerce.date().optional(),
  JWT_SECRET: z.string().min(32).optional(),
  /**
   * The process's own private key for the tokens it signs to the other processes
   * (service-tokens.ts): Ed25519, a PKCS#8 PEM or a JWK; or SERVICE_KEY_FILE, a file holding it
   * (a mounted Secret). Required in production; in development every process's key pair is
   * generated into VAR_DIR.
   */
  SERVICE_KEY: z.string().min(1).optional(),
  SERVICE_KEY_FILE: z.string().min(1).optional(),
  /**
   * Every process's public key, which the tokens sent to this one are verified with: a JSON
   * object `{"<process>": <SPKI PEM or JWK, or a list of them>}`; or SERVICE_PUBLIC_KEYS_FILE.
   */
  SERVICE_PUBLIC_KEYS: z.string().min(1).optional(),
  SERVICE_PUBLIC_KEYS_FILE: z.string().min(1).optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** Everything one client address may send a minute (default: 10 × RATE_LIMIT_PER_MINUTE). */
  RATE_LIMIT_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().min(1).optional(),
  /**
   * The proxies in front of the gateway whose `X-Forwarded-For` names the client: a hop count,
   * or their addresses and CIDRs, comma-separated. Empty: the peer is the client.
   */
  TRUSTED_PROXIES: z
    .string()
    .regex(/^(\d+|[0-9a-fA-F.:/, ]*)$/, "a hop count, or addresses and CIDRs separated by commas")
    .default(""),
  /**
   * Open participant realtime sockets (docs/interview.md#participant-sessions), counted across
   * every gateway in Redis: at most this many per participant session, and per client address.
   */
  REALTIME_SOCKETS_PER_SESSION: z.coerce.number().int().min(1).max(1_000).default(3),
  REALTIME_SOCKETS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(50),
  /**
   * Open event streams (`GET ENV/events/stream`, `evalp listen`), counted across every gateway in
   * Redis: at most this many per credential, and per client address.
   */
  EVENT_STREAMS_PER_CREDENTIAL: z.coerce.number().int().min(1).max(1_000).default(5),
  EVENT_STREAMS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(50),
  /** Invitations (`POST ORG/memberships`) an organization may send an hour, across every gateway. */
  INVITATIONS_PER_ORGANIZATION_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(50),
  /**
   * How long the gateway may reuse a resolved principal without asking control again (0: never).
   * Gateways forget every principal as soon as any of them sees credentials change (Redis
   * pub/sub), so this bounds only changes made behind the API's back.
   */
  PRINCIPAL_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(5_000),
  /** The planes' Connect servers, as every process reaches them: one URL, or their replicas' comma-separated. */
  CONTROL_URL: serviceAddress.default("http://127.0.0.1:8081"),
  PLATFORM_URL: serviceAddress.default("http://127.0.0.1:8082"),
  INTERVIEW_URL: serviceAddress.default("http://127.0.0.1:8083"),
  WEBHOOKS_URL: serviceAddress.default("http://127.0.0.1:8084"),
  /**
   * The most a bundle preview's `answers`, `context` and `signals` may take together (bytes of their
   * UTF-8 JSON): a larger one is 413 `payload_too_large` (docs/expressions.md#preview).
   */
  PREVIEW_INPUT_LIMIT_BYTES: z.coerce.number().int().min(1_024).max(1_048_576).default(262_144),
  /** How long the gateway waits for an upstream call before answering 504 (at most REQUEST_TIMEOUT_MS). */
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(10_000),
  /**
   * The longest the gateway serves one request: receiving it (Fastify's `requestTimeout`) and every
   * upstream call made for it, which get what is left of it. An Idempotency-Key's in-flight lock
   * lives this long and a margin, so that it outlives the request that holds it.
   */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(300_000).default(30_000),
  /** A service closes (gracefully) the RPC connections older than this, so that calls spread over new replicas. */
  RPC_MAX_CONNECTION_AGE_MS: z.coerce.number().int().min(0).default(300_000),
  /** How long a draining process may take after SIGTERM before it exits anyway. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Retention (docs/configuration.md#retention): each service deletes what it no longer needs from
   * its own schema, in batches, one replica at a time. Ages are in days.
   */
  RETENTION_ENABLED: booleanString.default(true),
  RETENTION_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1_000),
  RETENTION_OUTBOX_DAYS: z.coerce.number().positive().default(7),
  RETENTION_WEBHOOK_DELIVERIES_DAYS: z.coerce.number().positive().default(30),
  RETENTION_BEHAVIORAL_EVENTS_DAYS: z.coerce.number().positive().default(90),
  RETENTION_EXPIRED_GRACE_DAYS: z.coerce.number().min(0).default(7),
  /** Off (kept forever) unless set: they are the record of what happened. */
  RETENTION_AUDIT_EVENTS_DAYS: z.coerce.number().positive().optional(),
  RETENTION_INTERVIEW_ENTRIES_DAYS: z.coerce.number().positive().optional(),
});

type RawConfig = z.infer<typeof configSchema>;

/** The parsed configuration, with the secret resolved and the public URL known. */
export type Config = Omit<
  RawConfig,
  | "JWT_SECRET"
  | "PUBLIC_URL"
  | "REALTIME_URL"
  | "WEBHOOK_ALLOW_PRIVATE"
  | "WEBHOOK_SECRETS_KEYS"
  | "SERVICE_KEY"
  | "SERVICE_KEY_FILE"
  | "SERVICE_PUBLIC_KEYS"
  | "SERVICE_PUBLIC_KEYS_FILE"
> & {
  JWT_SECRET: string;
  /** Empty in production when not set (requireWebhookSecretsKeys refuses to start then). */
  WEBHOOK_SECRETS_KEYS: string;
  /** The process's private key (SERVICE_KEY or its file); empty when neither is set. */
  SERVICE_KEY: string;
  /** Every process's public key (SERVICE_PUBLIC_KEYS or its file); empty when neither is set. */
  SERVICE_PUBLIC_KEYS: string;
  /**
   * Outside production, when no key is configured: each process's private key by its name, from
   * the key set generated into VAR_DIR (or the one the tests made), so that every process of one
   * machine signs with its own. Empty in production.
   */
  developmentServiceKeys: Readonly<Record<string, string>>;
  PUBLIC_URL: string;
  REALTIME_URL: string;
  WEBHOOK_ALLOW_PRIVATE: boolean;
  /** True when the secret came from the development file rather than the environment. */
  usingDevelopmentSecret: boolean;
};

/** Thrown when the environment cannot make a valid configuration; main() prints it and exits 1. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Parses the environment once. In development the JWT secret is generated on first use and
 * kept under VAR_DIR; in production a missing or development secret stops the process.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  }
  const raw = parsed.data;
  const production = raw.NODE_ENV === "production";
  const secretFile = resolve(raw.VAR_DIR, DEV_SECRET_FILE);
  let secret = raw.JWT_SECRET;
  let usingDevelopmentSecret = false;
  if (!secret) {
    // In production only the processes that sign or verify with it have it (requireJwtSecret).
    if (!production) {
      secret = readOrCreateSecret(secretFile);
      usingDevelopmentSecret = true;
    }
  } else if (production && existsSync(secretFile) && readFileSync(secretFile, "utf8").trim() === secret) {
    throw new ConfigError("JWT_SECRET is the development secret; set a production secret");
  }
  // In production only the processes that call or serve RPCs have them: they refuse to start
  // without them (serviceSigningKey, serviceVerifier), the migrations do not need them.
  const serviceKey = settingOrFile(raw.SERVICE_KEY, raw.SERVICE_KEY_FILE, "SERVICE_KEY");
  let servicePublicKeys = settingOrFile(
    raw.SERVICE_PUBLIC_KEYS,
    raw.SERVICE_PUBLIC_KEYS_FILE,
    "SERVICE_PUBLIC_KEYS",
  );
  let developmentServiceKeys: Record<string, string> = {};
  if (!serviceKey && !servicePublicKeys && !production) {
    const generated = readOrCreateServiceKeys(resolve(raw.VAR_DIR, DEV_SERVICE_KEYS_FILE));
    servicePublicKeys = generated.public;
    developmentServiceKeys = generated.private;
  }
  try {
    if (serviceKey) parseServiceKey(serviceKey);
    if (servicePublicKeys) parseServicePublicKeys(servicePublicKeys);
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${(error as Error).message}`);
  }
  // In production only the webhooks process is given it (requireWebhookSecretsKeys).
  let webhookSecretsKeys = raw.WEBHOOK_SECRETS_KEYS ?? "";
  if (!webhookSecretsKeys && !production) {
    webhookSecretsKeys = `dev:${readOrCreateSecret(resolve(raw.VAR_DIR, DEV_WEBHOOK_SECRETS_KEY_FILE))}`;
  }
  if (webhookSecretsKeys) {
    try {
      parseSealingSecrets("WEBHOOK_SECRETS_KEYS", webhookSecretsKeys);
    } catch (error) {
      throw new ConfigError(`invalid configuration: ${(error as Error).message}`);
    }
  }
  if (raw.SMTP_URL && !raw.MAIL_FROM) {
    throw new ConfigError(
      "invalid configuration: MAIL_FROM is required with SMTP_URL (a sender your SMTP provider accepts)",
    );
  }
  if (raw.UPSTREAM_TIMEOUT_MS > raw.REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      "invalid configuration: UPSTREAM_TIMEOUT_MS is longer than REQUEST_TIMEOUT_MS, which bounds every request",
    );
  }
  if (Boolean(raw.NATS_USER) !== Boolean(raw.NATS_PASSWORD)) {
    throw new ConfigError("invalid configuration: NATS_USER and NATS_PASSWORD go together");
  }
  const publicUrl = raw.PUBLIC_URL ?? `http://${raw.HOST}:${raw.PORT}`;
  return {
    ...raw,
    JWT_SECRET: secret ?? "",
    WEBHOOK_SECRETS_KEYS: webhookSecretsKeys,
    SERVICE_KEY: serviceKey ?? "",
    SERVICE_PUBLIC_KEYS: servicePublicKeys ?? "",
    developmentServiceKeys,
    PUBLIC_URL: publicUrl,
    REALTIME_URL: raw.REALTIME_URL ?? realtimeUrlOf(publicUrl),
    // Private targets are allowed by default only outside production (docs/webhooks.md).
    WEBHOOK_ALLOW_PRIVATE: raw.WEBHOOK_ALLOW_PRIVATE ?? !production,
    usingDevelopmentSecret,
  };
}

/**
 * The JWT secret of a process that signs or verifies with it (the gateway: participant tokens,
 * cursors, sealed idempotency records; the interview plane: participant and agent tokens). In
 * production the other processes are not given it, and these refuse to start without it.
 */
export function requireJwtSecret(config: Pick<Config, "JWT_SECRET">): string {
  if (!config.JWT_SECRET) throw new ConfigError("JWT_SECRET is required when NODE_ENV=production");
  return config.JWT_SECRET;
}

/**
 * The keys that seal webhook secrets (WEBHOOK_SECRETS_KEYS), the first sealing: the webhooks
 * process refuses to start without them in production.
 */
export function requireWebhookSecretsKeys(config: Pick<Config, "WEBHOOK_SECRETS_KEYS">): SealingSecret[] {
  if (!config.WEBHOOK_SECRETS_KEYS) {
    throw new ConfigError("WEBHOOK_SECRETS_KEYS is required when NODE_ENV=production");
  }
  return parseSealingSecrets("WEBHOOK_SECRETS_KEYS", config.WEBHOOK_SECRETS_KEYS);
}

/** The settings a process's service keys come from. */
export type ServiceKeyConfig = Pick<Config, "SERVICE_KEY" | "SERVICE_PUBLIC_KEYS" | "developmentServiceKeys">;

/**
 * The private key the process `name` signs its service tokens with: SERVICE_KEY, or outside
 * production its key of the development set. A process that calls other planes refuses to
 * start without one.
 */
export function serviceSigningKey(config: ServiceKeyConfig, name: string): ServiceSigningKey {
  const key = config.SERVICE_KEY || config.developmentServiceKeys[name];
  if (!key) throw new ConfigError(`SERVICE_KEY is required: the private key of the ${name} process`);
  return parseServiceKey(key);
}

/**
 * The settings of a generated key set (`generateServiceKeySet`), as development has them: every
 * process of one machine, or of one test, signs with a key of its own.
 */
export function keySetConfig(set: ServiceKeySet): ServiceKeyConfig {
  return { SERVICE_KEY: "", SERVICE_PUBLIC_KEYS: set.public, developmentServiceKeys: set.private };
}

/** What the service `name` verifies the tokens sent to it with; it refuses to start without the keys. */
export function serviceVerifier(config: ServiceKeyConfig, name: string): ServiceTokenVerifier {
  if (!config.SERVICE_PUBLIC_KEYS) {
    throw new ConfigError(
      "SERVICE_PUBLIC_KEYS is required: the public keys of the processes that call this one",
    );
  }
  return { audience: name, keys: parseServicePublicKeys(config.SERVICE_PUBLIC_KEYS) };
}

/** The gateway's WebSocket door under a public URL: `https://h/base` → `wss://h/base/v1/participant/realtime`. */
export function realtimeUrlOf(publicUrl: string): string {
  const url = new URL(publicUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/participant/realtime`;
  return url.toString();
}

/** A setting given in the environment or as a file (a mounted Secret or ConfigMap); not both. */
function settingOrFile(
  value: string | undefined,
  file: string | undefined,
  name: string,
): string | undefined {
  if (value && file) throw new ConfigError(`invalid configuration: set ${name} or ${name}_FILE, not both`);
  if (!file) return value;
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${name}_FILE: ${(error as Error).message}`);
  }
}

/**
 * The development key set under VAR_DIR, made by the first process that needs it. Processes
 * starting together race for it: the set is written aside and linked into place, which only one
 * of them wins; the others read the winner's.
 */
function readOrCreateServiceKeys(file: string): ServiceKeySet {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const aside = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    writeFileSync(aside, `${JSON.stringify(generateServiceKeySet())}\n`, { mode: 0o600 });
    try {
      linkSync(aside, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(aside);
    }
  }
  return JSON.parse(readFileSync(file, "utf8")) as ServiceKeySet;
}

function readOrCreateSecret(file: string): string {
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dirname(file), { recursive: true });
  const secret = randomBytes(48).toString("base64url");
  // Written whole beside it, then linked into place only if absent: of processes starting at
  // once, the first to link wins and the others read its secret, complete, so that all of them
  // share one (a webhook secret sealed by one replica must open in another).
  const written = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(written, `${secret}\n`, { mode: 0o600 });
  try {
    linkSync(written, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readFileSync(file, "utf8").trim();
  } finally {
    unlinkSync(written);
  }
  return secret;
}

/**
 * Where the connections that hold session state go (LISTEN, session advisory locks):
 * DATABASE_DIRECT_URL when set, else DATABASE_URL (no pooler in between).
 */
export function directDatabaseUrl(config: Pick<Config, "DATABASE_URL" | "DATABASE_DIRECT_URL">): string {
  return config.DATABASE_DIRECT_URL ?? config.DATABASE_URL;
}
