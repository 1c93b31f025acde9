import { type Logger, pino } from "pino";

export type { Logger } from "pino";

/**
 * Paths redacted from every log line. Secrets must never reach a log (docs/configuration.md), so
 * anything that can carry one is censored at the logger rather than at each call site.
 */
export const REDACTED_PATHS = [
  "password",
  "*.password",
  "token",
  "*.token",
  "secret",
  "*.secret",
  "access_token",
  "*.access_token",
  "credential",
  "*.credential",
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
];

/** One JSON logger per process, named for the service so lines from all processes can be told apart. */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options = {
    level,
    base: { service },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The first line a process logs: the runtime it runs on. Behaviour and performance differ between
 * Node.js lines (and a fleet mid-upgrade runs two), so every process states its own.
 */
export function logRuntime(logger: Logger): void {
  logger.info(
    { node: process.version, platform: `${process.platform}-${process.arch}`, pid: process.pid },
    "starting",
  );
}
