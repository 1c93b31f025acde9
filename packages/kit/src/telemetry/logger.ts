import { isSpanContextValid, trace } from "@opentelemetry/api";
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
    mixin: traceFields,
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

/**
 * `trace_id` and `span_id` of the span active when a line is written (telemetry.ts), so that a
 * line leads to its trace; nothing while no span is (tracing off, or outside any).
 */
function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
}
