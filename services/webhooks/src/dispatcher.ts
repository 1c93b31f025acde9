import { randomUUID } from "node:crypto";
import { createWakeLoop, type Logger, type Pool } from "@evalp/kit";
import { attemptOutcome, traceAttempt } from "./attempt-tracing.js";
import { createSuccessRecorder, isPlainSuccess, recordAttempt } from "./attempts.js";
import { type ClaimedDelivery, claimDue, msUntilNextDue, releaseLease } from "./db/delivery-attempts.js";
import type { Sender } from "./deliver.js";
import type { DeliveryMetrics } from "./metrics.js";

/** The delivery worker of one process: takes due deliveries and attempts them. */
export type Dispatcher = {
  start(): void;
  /** Stops taking deliveries, lets attempts in flight finish (at most `drainMs`), then aborts the rest. */
  stop(drainMs?: number): Promise<void>;
  /** A delivery became due now (stored, replayed, recovered, tested): look at once. */
  wake(): void;
};

export type DispatcherOptions = {
  pool: Pool;
  logger: Logger;
  sender: Sender;
  schedule: readonly number[];
  /** Attempts in flight at once, overall and per endpoint. */
  concurrency: number;
  perEndpoint: number;
  /** How long one attempt may take; a lease outlives it. */
  timeoutMs: number;
  /** The longest the worker sleeps without looking for due deliveries. */
  pollMs?: number;
  /** Where each attempt is measured. */
  metrics?: DeliveryMetrics;
};

/**
 * Finds due deliveries (`FOR UPDATE SKIP LOCKED`, leased to this worker, so that two replicas
 * never send the same attempt), posts each within the overall and per-endpoint bounds, and
 * records the attempt and its outcome. Between rounds it sleeps until the next delivery falls
 * due, a wake-up, or `pollMs`.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const pollMs = options.pollMs ?? 1_000;
  // Longer than any attempt (its timeout covers the target check and the request), with room to record it.
  const leaseMs = options.timeoutMs + 5_000;
  const log = options.logger.child({ component: "dispatcher" });
  const perEndpoint = new Map<string, number>();
  const recordSuccess = createSuccessRecorder(options.pool);
  const running = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let inFlight = 0;
  let soon: NodeJS.Timeout | null = null;

  /** After a completion: wait a moment so that several finished attempts are refilled in one round. */
  function wakeSoon() {
    soon ??= setTimeout(() => {
      soon = null;
      loop.wake();
    }, 2);
  }

  function saturated(): string[] {
    return [...perEndpoint].filter(([, n]) => n >= options.perEndpoint).map(([id]) => id);
  }

  function launch(delivery: ClaimedDelivery) {
    inFlight += 1;
    perEndpoint.set(delivery.endpoint_id, (perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    const task = traceAttempt(delivery, () => attempt(delivery))
      .catch((error: unknown) =>
        log.error({ err: error, delivery_id: delivery.id }, "delivery attempt failed"),
      )
      .finally(() => {
        inFlight -= 1;
        const left = (perEndpoint.get(delivery.endpoint_id) ?? 1) - 1;
        if (left > 0) perEndpoint.set(delivery.endpoint_id, left);
        else perEndpoint.delete(delivery.endpoint_id);
        running.delete(task);
        wakeSoon();
      });
    running.add(task);
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    if (delivery.endpoint_stopped) {
      // Replayed or raced past a disabling: it is not sent.
      attemptOutcome("not_sent");
      await recordAttempt(options.pool, delivery, null, options.schedule);
      return;
    }
    const secrets = delivery.previous_secret
      ? [delivery.secret, delivery.previous_secret]
      : [delivery.secret];
    const result = await options.sender.send({
      url: delivery.url,
      body: delivery.body,
      eventId: delivery.event_id,
      secrets,
      signal: shutdown.signal,
    });
    attemptOutcome(result.aborted ? "aborted" : result.ok ? "succeeded" : "failed", result);
    if (result.aborted) {
      // Cut off by shutdown: another worker (or this one after a restart) attempts it again.
      await releaseLease(options.pool, delivery);
      return;
    }
    options.metrics?.attempted(result);
    if (isPlainSuccess(delivery, result)) await recordSuccess(delivery, result);
    else await recordAttempt(options.pool, delivery, result, options.schedule);
  }

  /** One round: claims what the free capacity allows, then sleeps until the next delivery is due. */
  async function round(): Promise<number> {
    const free = options.concurrency - inFlight;
    if (free > 0) {
      const claimed = await claimDue(options.pool, {
        limit: free,
        perEndpoint: options.perEndpoint,
        busy: perEndpoint,
        saturated: saturated(),
        leaseMs,
        token: randomUUID(),
      });
      for (const delivery of claimed) launch(delivery);
      // Their completions wake the next round (wakeSoon), which looks again: asking now when
      // the next delivery falls due would cost a query per round while busy.
      if (claimed.length > 0) return pollMs;
    }
    if (inFlight >= options.concurrency) return pollMs;
    const next = await msUntilNextDue(options.pool, saturated());
    return next === null ? pollMs : Math.min(Math.max(next, 10), pollMs);
  }

  const loop = createWakeLoop({
    logger: log,
    failure: "dispatcher round failed",
    intervalMs: pollMs,
    pass: round,
  });

  return {
    start: () => loop.start(),
    async stop(drainMs = 5_000) {
      if (soon) clearTimeout(soon);
      await loop.stop();
      const drained = Promise.all(running).then(() => true);
      const late = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), drainMs).unref());
      if (!(await Promise.race([drained, late]))) shutdown.abort();
      await Promise.all(running);
      await options.sender.close();
    },
    wake: () => loop.wake(),
  };
}
