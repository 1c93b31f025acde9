import { randomBytes } from "node:crypto";

/** A Redis key prefix of its own for one test file, so parallel files never share keys. */
export function uniqueRedisPrefix(): string {
  return `evalp-test:${randomBytes(6).toString("hex")}:`;
}

/** A unique suffix for NATS stream and consumer names of one test file. */
export function uniqueSuffix(): string {
  return randomBytes(6).toString("hex").toUpperCase();
}
