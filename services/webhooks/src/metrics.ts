import { LATENCY_BUCKETS, METRICS, metricConfig, metricOf, type Registry } from "@evalp/kit";
import { Counter, Histogram } from "prom-client";
import { DEAD_LETTER_SUBJECT } from "./db/deliveries.js";
import type { AttemptResult } from "./retry.js";

/** What the delivery worker reports: each attempt made, and the dead letters announced. */
export type DeliveryMetrics = {
  /** One attempt that reached its end (not one cut off by shutdown). */
  attempted(result: AttemptResult): void;
  /** The subjects of the plane's outbox rows just published: the dead letters among them count. */
  published(subjects: string[]): void;
};

/** What an attempt came to, in a word: a 2xx, another status, or no response at all. */
export function attemptOutcome(result: AttemptResult): "success" | "http_error" | "no_response" {
  if (result.ok) return "success";
  return result.status === undefined ? "no_response" : "http_error";
}

/** Records nothing: a worker built without a registry (tests of extra replicas). */
const UNMEASURED: DeliveryMetrics = { attempted: () => {}, published: () => {} };

/**
 * `evalp_webhook_attempt_duration_seconds{outcome}` (a histogram: its `_count` is the attempts by
 * outcome: `success`, `http_error` for any other status, `no_response` for a timeout, a refused
 * connection or target) and `evalp_webhook_dead_letters_total`. Dead letters are counted as their
 * announcements on `webhooks.dead_letter` are published: every path that dead-letters a delivery
 * (attempts exhausted, 410 Gone, an endpoint disabled or deleted, by the worker or an RPC)
 * announces it in the same transaction, so this counts each exactly when it committed.
 */
export function deliveryMetrics(registry: Registry | undefined): DeliveryMetrics {
  if (!registry) return UNMEASURED;
  const duration = metricOf(
    registry,
    METRICS.webhookAttemptDuration.name,
    () =>
      new Histogram({
        ...metricConfig(METRICS.webhookAttemptDuration),
        buckets: LATENCY_BUCKETS,
        registers: [registry],
      }),
  );
  const deadLetters = metricOf(
    registry,
    METRICS.webhookDeadLetters.name,
    () => new Counter({ ...metricConfig(METRICS.webhookDeadLetters), registers: [registry] }),
  );
  return {
    attempted(result) {
      duration.observe({ outcome: attemptOutcome(result) }, result.durationMs / 1000);
    },
    published(subjects) {
      const count = subjects.filter((subject) => subject === DEAD_LETTER_SUBJECT).length;
      if (count > 0) deadLetters.inc(count);
    },
  };
}
