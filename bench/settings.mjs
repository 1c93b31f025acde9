// The bench's settings, read from the environment once, and its log (on stderr, with the seconds
// since the bench started).
import { fileURLToPath } from "node:url";

/** A setting from the environment (read by name; none of them affect a build). */
export const setting = (name) => process.env[name];

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const ROUNDS = Number(setting("BENCH_ROUNDS") ?? 3);
export const ROUND_SECONDS = Number(setting("BENCH_SECONDS") ?? 3);
export const SATURATION_CONNECTIONS = 16;
export const FIXED_STREAMS = 8;

export const startedAt = Date.now();
export const log = (message) =>
  console.error(`[bench ${((Date.now() - startedAt) / 1000).toFixed(0)}s] ${message}`);
