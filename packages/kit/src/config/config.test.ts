import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateServiceKeySet, SERVICE_NAMES } from "../auth/service-tokens.js";
import { connectNats } from "../events/nats.js";
import { createLogger } from "../telemetry/logger.js";
import {
  ConfigError,
  directDatabaseUrl,
  loadConfig,
  requireJwtSecret,
  requireWebhookSecretsKeys,
  serviceSigningKey,
  serviceVerifier,
} from "./config.js";

/** A production process's keys: its own private key and every process's public one. */
const GENERATED = generateServiceKeySet(["control"]);
const KEYS = { SERVICE_KEY: GENERATED.private.control ?? "", SERVICE_PUBLIC_KEYS: GENERATED.public };

const varDir = () => mkdtempSync(join(tmpdir(), "evalp-config-"));

describe("loadConfig", () => {
  it("has the contract's development defaults", () => {
    const config = loadConfig({ VAR_DIR: varDir() });
    expect(config.DATABASE_URL).toBe("postgres://127.0.0.1:5432/evalp");
    expect(config.NATS_URL).toBe("nats://127.0.0.1:4222");
    expect(config.REDIS_URL).toBe("redis://127.0.0.1:6379");
    expect(config.PORT).toBe(8080);
    expect(config.PUBLIC_URL).toBe("http://127.0.0.1:8080");
    expect(config.RATE_LIMIT_PER_MINUTE).toBe(600);
    expect(config.SIGNUP_ENABLED).toBe(true);
    expect(config.WEBHOOK_ALLOW_PRIVATE).toBe(true);
  });

  it("retains by the documented ages, and keeps audit events and interview entries unless told", () => {
    const config = loadConfig({ VAR_DIR: varDir() });
    expect(config.RETENTION_ENABLED).toBe(true);
    expect(config.RETENTION_INTERVAL_MS).toBe(3_600_000);
    expect(config.RETENTION_BATCH_SIZE).toBe(1_000);
    expect(config.RETENTION_OUTBOX_DAYS).toBe(7);
    expect(config.RETENTION_WEBHOOK_DELIVERIES_DAYS).toBe(30);
    expect(config.RETENTION_BEHAVIORAL_EVENTS_DAYS).toBe(90);
    expect(config.RETENTION_EXPIRED_GRACE_DAYS).toBe(7);
    expect(config.RETENTION_AUDIT_EVENTS_DAYS).toBeUndefined();
    expect(config.RETENTION_INTERVIEW_ENTRIES_DAYS).toBeUndefined();
    const set = loadConfig({
      VAR_DIR: varDir(),
      RETENTION_ENABLED: "false",
      RETENTION_AUDIT_EVENTS_DAYS: "365",
      RETENTION_OUTBOX_DAYS: "0.5",
    });
    expect(set.RETENTION_ENABLED).toBe(false);
    expect(set.RETENTION_AUDIT_EVENTS_DAYS).toBe(365);
    expect(set.RETENTION_OUTBOX_DAYS).toBe(0.5);
    for (const bad of [
      { RETENTION_OUTBOX_DAYS: "0" },
      { RETENTION_BATCH_SIZE: "0" },
      { RETENTION_INTERVAL_MS: "10" },
    ]) {
      expect(() => loadConfig({ VAR_DIR: varDir(), ...bad })).toThrow(ConfigError);
    }
  });

  it("takes OTEL_RESOURCE_ATTRIBUTES of the specification's form, and refuses another at start", () => {
    const dir = varDir();
    const config = loadConfig({
      VAR_DIR: dir,
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod,team=a%2Cb",
    });
    expect(config.OTEL_RESOURCE_ATTRIBUTES).toBe("deployment.environment.name=prod,team=a%2Cb");
    expect(() =>
      loadConfig({ VAR_DIR: dir, OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name" }),
    ).toThrow(/OTEL_RESOURCE_ATTRIBUTES/);
  });

  it("requires MAIL_FROM with SMTP_URL, and takes one mailbox without line breaks", () => {
    const dir = varDir();
    expect(() => loadConfig({ VAR_DIR: dir, SMTP_URL: "smtp://mail.example:587" })).toThrow(/MAIL_FROM/);
    const config = loadConfig({
      VAR_DIR: dir,
      SMTP_URL: "smtp://mail.example:587",
      MAIL_FROM: "Acme Evaluations <evaluations@acme.example>",
      MAIL_REPLY_TO: "support@acme.example",
    });
    expect(config.MAIL_FROM).toBe("Acme Evaluations <evaluations@acme.example>");
    expect(config.MAIL_REPLY_TO).toBe("support@acme.example");
    for (const bad of [
      "not an address",
      "a@example.com, b@example.com",
      "evaluations@acme.example\r\nBcc: everyone@example.com",
      "Name <evaluations@acme.example",
    ]) {
      expect(() => loadConfig({ VAR_DIR: dir, MAIL_FROM: bad }), bad).toThrow(ConfigError);
    }
  });

  it("generates the development secret once and keeps it under VAR_DIR", () => {
    const dir = varDir();
    const first = loadConfig({ VAR_DIR: dir });
    expect(first.usingDevelopmentSecret).toBe(true);
    expect(first.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(join(dir, "jwt-secret"), "utf8").trim()).toBe(first.JWT_SECRET);
    expect(loadConfig({ VAR_DIR: dir }).JWT_SECRET).toBe(first.JWT_SECRET);
  });

  it("refuses to start in production without a secret, or on the development one", () => {
    const dir = varDir();
    // Only the processes that sign or verify with it need the JWT secret.
    const withoutJwt = loadConfig({ NODE_ENV: "production", VAR_DIR: dir, ...KEYS });
    expect(() => requireJwtSecret(withoutJwt)).toThrow(ConfigError);
    const developmentSecret = loadConfig({ VAR_DIR: dir }).JWT_SECRET;
    expect(() => loadConfig({ NODE_ENV: "production", VAR_DIR: dir, JWT_SECRET: developmentSecret })).toThrow(
      /development secret/,
    );
    // Nor its service keys: a process that calls or serves RPCs refuses to start without them,
    // and production generates none.
    const withoutKeys = loadConfig({ NODE_ENV: "production", VAR_DIR: dir, JWT_SECRET: "p".repeat(40) });
    expect(withoutKeys.developmentServiceKeys).toEqual({});
    expect(() => serviceSigningKey(withoutKeys, "control")).toThrow(/SERVICE_KEY is required/);
    expect(() => serviceVerifier(withoutKeys, "control")).toThrow(/SERVICE_PUBLIC_KEYS is required/);
    const production = loadConfig({
      NODE_ENV: "production",
      VAR_DIR: dir,
      JWT_SECRET: "p".repeat(40),
      ...KEYS,
    });
    expect(production.WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(serviceSigningKey(production, "control").kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(() =>
      loadConfig({
        NODE_ENV: "production",
        VAR_DIR: dir,
        JWT_SECRET: "p".repeat(40),
        SERVICE_KEY: "not a key",
      }),
    ).toThrow(/SERVICE_KEY/);
    // A private key where the public ones go is refused: that setting is given to every process.
    expect(() =>
      loadConfig({
        ...KEYS,
        VAR_DIR: dir,
        SERVICE_PUBLIC_KEYS: JSON.stringify({ control: KEYS.SERVICE_KEY }),
      }),
    ).toThrow(/private key/);
  });

  it("reads the keys from files (mounted Secrets), and generates one key pair per process in development", () => {
    const dir = varDir();
    writeFileSync(join(dir, "key.pem"), KEYS.SERVICE_KEY);
    writeFileSync(join(dir, "public.json"), KEYS.SERVICE_PUBLIC_KEYS);
    const mounted = loadConfig({
      VAR_DIR: dir,
      SERVICE_KEY_FILE: join(dir, "key.pem"),
      SERVICE_PUBLIC_KEYS_FILE: join(dir, "public.json"),
    });
    expect(mounted.SERVICE_KEY).toBe(KEYS.SERVICE_KEY);
    expect(mounted.developmentServiceKeys).toEqual({});
    const development = loadConfig({ VAR_DIR: dir });
    // Every process its own key, the same at the next start.
    const kids = SERVICE_NAMES.map((name) => serviceSigningKey(development, name).kid);
    expect(new Set(kids).size).toBe(SERVICE_NAMES.length);
    expect(serviceSigningKey(loadConfig({ VAR_DIR: dir }), "gateway").kid).toBe(kids[0]);
    expect(serviceVerifier(development, "control").keys.get(kids[0] ?? "")?.service).toBe("gateway");
  });

  it("generates a webhook secrets key in development, and requires a valid one in production", () => {
    const dir = varDir();
    const development = loadConfig({ VAR_DIR: dir });
    expect(development.WEBHOOK_SECRETS_KEYS).toMatch(/^dev:.{32,}$/);
    expect(loadConfig({ VAR_DIR: dir }).WEBHOOK_SECRETS_KEYS).toBe(development.WEBHOOK_SECRETS_KEYS);
    expect(requireWebhookSecretsKeys(development)).toHaveLength(1);
    const production = {
      NODE_ENV: "production",
      VAR_DIR: dir,
      ...KEYS,
    };
    expect(() => requireWebhookSecretsKeys(loadConfig(production))).toThrow(
      /WEBHOOK_SECRETS_KEYS is required/,
    );
    const keys = `k2:${"n".repeat(40)},k1:${"o".repeat(40)}`;
    expect(requireWebhookSecretsKeys(loadConfig({ ...production, WEBHOOK_SECRETS_KEYS: keys }))[0]?.kid).toBe(
      "k2",
    );
    expect(() => loadConfig({ ...production, WEBHOOK_SECRETS_KEYS: "k1:short" })).toThrow(
      /WEBHOOK_SECRETS_KEYS/,
    );
  });

  it("takes a NATS user (one of the processes) only with its password", () => {
    const dir = varDir();
    expect(loadConfig({ VAR_DIR: dir, NATS_USER: "control", NATS_PASSWORD: "pw" }).NATS_USER).toBe("control");
    expect(() => loadConfig({ VAR_DIR: dir, NATS_USER: "control" })).toThrow(/NATS_USER and NATS_PASSWORD/);
    expect(() => loadConfig({ VAR_DIR: dir, NATS_PASSWORD: "pw" })).toThrow(/NATS_USER and NATS_PASSWORD/);
    expect(() => loadConfig({ VAR_DIR: dir, NATS_USER: "admin", NATS_PASSWORD: "pw" })).toThrow(/NATS_USER/);
    // In production a process without one does not start, before it tries to connect.
    expect(() =>
      connectNats(
        { NATS_URL: "nats://127.0.0.1:1", NODE_ENV: "production" },
        "control",
        createLogger("t", "silent"),
      ),
    ).toThrow(/NATS_USER and NATS_PASSWORD are required/);
  });

  it("bounds every request: REQUEST_TIMEOUT_MS 30 s by default, and no upstream call longer than it", () => {
    const dir = varDir();
    const config = loadConfig({ VAR_DIR: dir });
    expect(config.REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(config.UPSTREAM_TIMEOUT_MS).toBe(10_000);
    expect(() => loadConfig({ VAR_DIR: dir, UPSTREAM_TIMEOUT_MS: "40000" })).toThrow(/REQUEST_TIMEOUT_MS/);
    expect(
      loadConfig({ VAR_DIR: dir, UPSTREAM_TIMEOUT_MS: "40000", REQUEST_TIMEOUT_MS: "60000" })
        .REQUEST_TIMEOUT_MS,
    ).toBe(60_000);
    // Unbounded, a key's lock could not be made to outlive the request holding it.
    expect(() => loadConfig({ VAR_DIR: dir, REQUEST_TIMEOUT_MS: "3600000" })).toThrow(ConfigError);
    expect(() => loadConfig({ VAR_DIR: dir, UPSTREAM_TIMEOUT_MS: "3600000" })).toThrow(ConfigError);
  });

  it("names every invalid variable", () => {
    expect(() => loadConfig({ VAR_DIR: varDir(), PORT: "eighty", SIGNUP_ENABLED: "maybe" })).toThrow(
      /PORT.*SIGNUP_ENABLED|SIGNUP_ENABLED.*PORT/,
    );
  });

  it("takes a service's replicas as a comma-separated list, and refuses what is no http(s) URL", () => {
    const config = loadConfig({
      VAR_DIR: varDir(),
      CONTROL_URL: "http://10.0.0.1:8081,http://10.0.0.2:8081",
    });
    expect(config.CONTROL_URL).toBe("http://10.0.0.1:8081,http://10.0.0.2:8081");
    expect(() => loadConfig({ VAR_DIR: varDir(), CONTROL_URL: "http://10.0.0.1:8081,not a url" })).toThrow(
      /CONTROL_URL/,
    );
    expect(() => loadConfig({ VAR_DIR: varDir(), PLATFORM_URL: "ftp://10.0.0.1" })).toThrow(/PLATFORM_URL/);
  });
});

describe("directDatabaseUrl", () => {
  it("is DATABASE_DIRECT_URL when set (a pooler in between), else DATABASE_URL", () => {
    const pooled = "postgres://evalp@pooler:5432/evalp";
    const direct = "postgres://evalp@primary:5432/evalp";
    const base = { VAR_DIR: varDir(), DATABASE_URL: pooled };
    expect(directDatabaseUrl(loadConfig({ ...base, DATABASE_DIRECT_URL: direct }))).toBe(direct);
    expect(directDatabaseUrl(loadConfig(base))).toBe(pooled);
    expect(() => loadConfig({ ...base, DATABASE_DIRECT_URL: "" })).toThrow(/DATABASE_DIRECT_URL/);
  });
});
