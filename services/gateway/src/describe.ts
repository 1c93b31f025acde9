import { randomBytes } from "node:crypto";
import { createLogger, generateServiceKeySet, loadConfig } from "@evalp/kit";
import { Redis } from "ioredis";
import { buildApp } from "./app.js";
import { createUpstreams } from "./upstream.js";

/**
 * The API's OpenAPI document as `/openapi.json` serves it, built without any connection: the
 * linter and the typed client are generated from it without a running platform. `env` is read
 * as the development defaults complete it (the server address in the document comes from
 * `PUBLIC_URL`).
 */
export async function describeApi(env: NodeJS.ProcessEnv = process.env): Promise<Record<string, unknown>> {
  // Throwaway secrets: nothing is signed, and describing must not write development secret files
  // wherever it happens to run (a package's build, the linter).
  const throwaway = randomBytes(48).toString("base64url");
  const keys = generateServiceKeySet(["gateway"]);
  const config = loadConfig({
    JWT_SECRET: throwaway,
    SERVICE_KEY: keys.private.gateway,
    SERVICE_PUBLIC_KEYS: keys.public,
    ...env,
    NODE_ENV: "development",
  });
  // Never connected: describing the routes sends no command.
  const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  const app = await buildApp({
    config,
    logger: createLogger("openapi", "silent"),
    redis,
    upstreams: createUpstreams(config),
  });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
    redis.disconnect();
  }
}
