import { randomUUID } from "node:crypto";
import { createWakeLoop, type Logger, type Pool } from "@evalp/kit";
import { attemptOutcome, traceAttempt } from "./attempt-tracing.js";
import { createSuccessRecorder, isPlainSuccess, recordAttempt } from "./attempts.js";
import {
  type ClaimedDelivery,
  claimDue,
  confirmLeases,
  type HeldLease,
  msUntilNextDue,
  releaseLease,
  releaseLeases,
  renewLeases,
} from "./db/delivery-attempts.js";
import type { Sender } from "./deliver.js";
import type { DeliveryMetrics } from "./metrics.js";
import type { SecretSealer } from "./sealed-secrets.js";

/** The delivery worker of one process: takes due deliveries and attempts them. */
export type Dispatcher = {
  start(): void;
  /** Stops taking deliveries, lets attempts in flight finish (at most `drainMs`), then aborts the rest. */
  stop(drainMs?: number): Promise<void>;
  /** A delivery became due now (stored for a claim, replayed, recovered, tested): look at once. */
  wake(): void;
  /** The lease deliveries handed over by `take` are stored under: a fresh token, and for how long. */
  storedLease(): { token: string; ms: number };
  /**
   * Deliveries just stored leased to this worker (`storedLease`, taken at `leasedAt`, a
   * `performance.now()`), in the order their events were stored: attempted from memory, with no
   * claim, in that order per endpoint. `committed` answers whether the store committed: they may
   * be handed over while it commits, so an attempt may begin before, but records nothing until
   * it did, and nothing if it did not (the events come again).
   */
  take(deliveries: ClaimedDelivery[], leasedAt: number, committed?: Promise<boolean>): void;
  /** How many deliveries of an endpoint wait in memory. */
  queued(endpointId: string): number;
  /** How many deliveries wait in memory, all endpoints together. */
  queuedTotal(): number;
};

/**
 * How long a delivery handed over in memory may wait for its turn beyond an attempt's own lease
 * before its lease is renewed: long enough that a busy worker renews rarely, short enough that a
 * worker that dies leaves its deliveries to others soon.
 */
const QUEUED_LEASE_MS = 30_000;

/**
 * How long ago a delivery waiting in memory may have been seen still leased to this worker and
 * still waiting when it is launched. A disabling or deletion dead-letters the endpoint's waiting
 * deliveries in the table, which the memory does not see: past this bound the next few are read
 * again first, so that nothing is sent later than this after the disabling answered. Without a
 * backlog a delivery is launched within milliseconds of being stored and never read again; with
 * one, an endpoint's queue is read at most about 4 times a second (one indexed read of a few
 * rows), which its slow receiver, not this read, limits anyway.
 */
const CONFIRMED_MS = 250;

/**
 * A delivery waiting in memory, with when its lease ends (a lower bound) and when it was last
 * seen held (an upper bound: before the statement that saw it), both `performance.now()` times.
 */
type Queued = {
  delivery: ClaimedDelivery;
  leaseEnds: number;
  confirmedAt: number;
  /** Whether the store of a delivery handed over while it committed did commit. */
  committed: Promise<boolean> | undefined;
};

export type DispatcherOptions = {
  pool: Pool;
  logger: Logger;
  /** Opens the endpoints' sealed secrets, to sign each attempt. */
  sealer: SecretSealer;
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
 * Attempts deliveries within the overall and per-endpoint bounds and records each attempt and its
 * outcome. Deliveries come two ways. The events consumer stores new ones already leased to this
 * worker and hands them over (`take`): they wait in memory, per endpoint in the order stored, and
 * are attempted without any query to find or claim them. Everything else (retries, replays,
 * recoveries, test events, deliveries whose worker died or that the consumer left to a claim) is
 * claimed from the table (`FOR UPDATE SKIP LOCKED`, leased to this worker, so that two replicas
 * never send the same attempt) in rounds; between rounds the worker sleeps until the next
 * delivery falls due, a wake-up, or `pollMs`. Claims come first while the table has due
 * deliveries, so that a stream of new events does not starve retries.
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
  let stopping = false;
  /** The last round may have left due deliveries in the table (it filled the capacity, or had none). */
  let tableDue = true;
  const storedLeaseMs = leaseMs + QUEUED_LEASE_MS;
  /** Deliveries handed over and not yet attempted, per endpoint, in the order stored. */
  const queues = new Map<string, Queued[]>();
  let queuedCount = 0;
  /** Endpoints whose queued leases are being renewed or confirmed: none of theirs is launched meanwhile. */
  const checking = new Set<string>();
  /**
   * Endpoints whose failure streak this worker started or saw go on, since its last success
   * there: a delivery read before the streak began does not know it must end it.
   */
  const failing = new Set<string>();

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

  function launch(delivery: ClaimedDelivery, committed?: Promise<boolean>) {
    inFlight += 1;
    perEndpoint.set(delivery.endpoint_id, (perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    const task = traceAttempt(delivery, () => attempt(delivery, committed))
      .catch((error: unknown) =>
        log.error({ err: error, delivery_id: delivery.id }, "delivery attempt failed"),
      )
      .finally(() => {
        inFlight -= 1;
        const left = (perEndpoint.get(delivery.endpoint_id) ?? 1) - 1;
        if (left > 0) perEndpoint.set(delivery.endpoint_id, left);
        else perEndpoint.delete(delivery.endpoint_id);
        running.delete(task);
        // Due deliveries in the table first; otherwise the next one waiting in memory, at once.
        if (tableDue) wakeSoon();
        else pump();
      });
    running.add(task);
  }

  /**
   * Launches deliveries waiting in memory while there is room, one endpoint after the other: an
   * endpoint served goes to the back of the line (and is met again in this same pass if room is
   * left), so that one busy endpoint does not hold every slot its own bound allows first. The
   * endpoints whose next deliveries must be checked against the table first are checked together,
   * one statement for all of them: checked together, they fall due together again, so a backlog
   * over many endpoints costs a read every bound, not one per endpoint.
   */
  function pump() {
    if (stopping) return;
    const toRenew = new Map<string, Queued[]>();
    const toConfirm = new Map<string, Queued[]>();
    for (const [endpointId, queue] of queues) {
      if (inFlight >= options.concurrency) break;
      if (checking.has(endpointId) || (perEndpoint.get(endpointId) ?? 0) >= options.perEndpoint) continue;
      const next = queue[0];
      if (!next) {
        queues.delete(endpointId);
        continue;
      }
      const now = performance.now();
      // An attempt needs its whole lease ahead of it, as a claimed one has.
      if (next.leaseEnds - now < leaseMs) {
        toRenew.set(endpointId, queue);
        continue;
      }
      // Seen held too long ago: its endpoint may have been disabled or deleted since.
      if (now - next.confirmedAt > CONFIRMED_MS) {
        toConfirm.set(endpointId, queue.slice(0, 2 * options.perEndpoint));
        continue;
      }
      queue.shift();
      queuedCount -= 1;
      queues.delete(endpointId);
      if (queue.length > 0) queues.set(endpointId, queue);
      launch(next.delivery, next.committed);
    }
    if (toRenew.size > 0) renew(toRenew);
    if (toConfirm.size > 0) confirm(toConfirm);
  }

  /**
   * Extends the leases of endpoints' waiting deliveries (one statement); those whose lease was
   * taken meanwhile (a disabling, or another worker after it expired) are dropped.
   */
  function renew(batches: Map<string, Queued[]>) {
    recheck(batches, "renewing queued leases failed", async (deliveries, started) => {
      const held = await renewLeases(options.pool, deliveries, storedLeaseMs);
      return (entry) => {
        if (!held.has(entry.delivery.id)) return false;
        entry.leaseEnds = started + storedLeaseMs;
        entry.confirmedAt = started;
        return true;
      };
    });
  }

  /**
   * Reads again whether the first deliveries of endpoints' queues (as many as could be launched
   * before the bound passes again) are still leased to this worker and waiting; those that are
   * not (dead-lettered by a disabling or deletion, or taken by another worker) are dropped. One
   * whose endpoint stopped while it was being stored is kept, marked so, to be recorded as not
   * sent; the others take their endpoint's url and secrets as they are now.
   */
  function confirm(batches: Map<string, Queued[]>) {
    recheck(batches, "confirming queued leases failed", async (deliveries, started) => {
      const held = await confirmLeases(options.pool, deliveries);
      return (entry) => {
        const seen = held.get(entry.delivery.id);
        if (!seen) return false;
        entry.confirmedAt = started;
        // Stopped, moved or re-keyed since it was stored: it is attempted as the endpoint is now.
        Object.assign(entry.delivery, seen);
        return true;
      };
    });
  }

  /**
   * Checks batches of endpoints' queues against the table in one statement (`check`, given the
   * time it began, answers whether an entry is still held, updating it) and drops the entries
   * that are not. Those endpoints' later deliveries wait meanwhile, so that they do not overtake.
   * When the check fails, the whole batches are dropped: not known to be held, their leases run
   * out and a claim takes them (here or in another worker).
   */
  function recheck(
    batches: Map<string, Queued[]>,
    failure: string,
    check: (deliveries: ClaimedDelivery[], started: number) => Promise<(entry: Queued) => boolean>,
  ) {
    // The batches as they are now: the queues they may be grow while the check runs.
    const snapshots = new Map([...batches].map(([endpointId, batch]) => [endpointId, new Set(batch)]));
    const entries = [...snapshots.values()].flatMap((batch) => [...batch]);
    for (const endpointId of snapshots.keys()) checking.add(endpointId);
    // Rows whose store still commits are not seen yet: the check waits for it.
    Promise.all(entries.map((entry) => entry.committed))
      .then(() =>
        check(
          entries.map(({ delivery }) => delivery),
          performance.now(),
        ),
      )
      .then((held) => {
        const kept = new Set(entries.filter(held));
        for (const [endpointId, batch] of snapshots) {
          drop(endpointId, (entry) => batch.has(entry) && !kept.has(entry));
        }
      })
      .catch((error: unknown) => {
        log.warn({ err: error, endpoint_ids: [...snapshots.keys()] }, failure);
        for (const [endpointId, batch] of snapshots) drop(endpointId, (entry) => batch.has(entry));
      })
      .finally(() => {
        for (const endpointId of snapshots.keys()) checking.delete(endpointId);
        pump();
      });
  }

  function drop(endpointId: string, dropped: (entry: Queued) => boolean) {
    const queue = queues.get(endpointId);
    if (!queue) return;
    const kept = queue.filter((entry) => !dropped(entry));
    queuedCount -= queue.length - kept.length;
    if (kept.length > 0) queues.set(endpointId, kept);
    else queues.delete(endpointId);
  }

  /**
   * The secrets that sign an attempt, opened for it only: the current one, and a rotation's
   * previous one until it expires. A secret no key of WEBHOOK_SECRETS_KEYS opens (its key dropped
   * before the re-seal finished) cannot sign: the attempt is not made, its lease runs out and a
   * later claim tries again, once the key is back.
   */
  function openSecrets(delivery: ClaimedDelivery): string[] {
    const current = options.sealer.open(delivery.endpoint_id, delivery.secret);
    if (current === null) {
      throw new Error("the endpoint's secret is sealed under a key WEBHOOK_SECRETS_KEYS does not hold");
    }
    if (delivery.previous_secret === null) return [current];
    const previous = options.sealer.open(delivery.endpoint_id, delivery.previous_secret);
    if (previous === null)
      log.warn({ endpoint_id: delivery.endpoint_id }, "previous secret does not open; not signed with it");
    return previous === null ? [current] : [current, previous];
  }

  /**
   * Sends a delivery and records the outcome. One handed over while its store commits is sent at
   * once, and its outcome recorded once the store has committed (before that, no session sees
   * its row); if the store failed, nothing is recorded: the events come again and are stored anew.
   */
  async function attempt(delivery: ClaimedDelivery, committed?: Promise<boolean>): Promise<void> {
    if (delivery.endpoint_stopped) {
      // Replayed or raced past a disabling: it is not sent.
      attemptOutcome("not_sent");
      await recordAttempt(options.pool, delivery, null, options.schedule);
      return;
    }
    const secrets = openSecrets(delivery);
    const result = await options.sender.send({
      url: delivery.url,
      body: delivery.body,
      eventId: delivery.event_id,
      secrets,
      signal: shutdown.signal,
    });
    if (committed && !(await committed)) return;
    attemptOutcome(result.aborted ? "aborted" : result.ok ? "succeeded" : "failed", result);
    if (result.aborted) {
      // Cut off by shutdown: another worker (or this one after a restart) attempts it again.
      await releaseLease(options.pool, delivery);
      return;
    }
    options.metrics?.attempted(result);
    if (isPlainSuccess(delivery, result) && !failing.has(delivery.endpoint_id)) {
      await recordSuccess(delivery, result);
      return;
    }
    if (!result.ok) failing.add(delivery.endpoint_id);
    await recordAttempt(options.pool, delivery, result, options.schedule);
    // Recorded as a success, which ended the streak.
    if (result.ok) failing.delete(delivery.endpoint_id);
  }

  /** One round: claims what the free capacity allows, then sleeps until the next delivery is due. */
  async function round(): Promise<number> {
    try {
      return await claimRound();
    } finally {
      // What the claims left of the capacity goes to the deliveries waiting in memory.
      pump();
    }
  }

  async function claimRound(): Promise<number> {
    const free = options.concurrency - inFlight;
    // Full: the due deliveries in the table (if any) are looked for at the next completion.
    tableDue = free <= 0;
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
      // A full claim may have left more: completions wake the next round (wakeSoon), which
      // looks again. Asking now when the next delivery falls due would cost a query per round.
      tableDue = claimed.length >= free;
      if (claimed.length > 0) return pollMs;
    }
    if (inFlight >= options.concurrency) {
      tableDue = true;
      return pollMs;
    }
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
      stopping = true;
      if (soon) clearTimeout(soon);
      await loop.stop();
      // What waits in memory goes back to the table at once, for another worker (or a restart).
      const waiting: HeldLease[] = [...queues.values()].flat().map(({ delivery }) => delivery);
      queues.clear();
      queuedCount = 0;
      if (waiting.length > 0) {
        await releaseLeases(options.pool, waiting).catch((error: unknown) =>
          log.warn({ err: error, deliveries: waiting.length }, "releasing queued leases failed"),
        );
      }
      const drained = Promise.all(running).then(() => true);
      const late = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), drainMs).unref());
      if (!(await Promise.race([drained, late]))) shutdown.abort();
      await Promise.all(running);
      await options.sender.close();
    },
    wake: () => {
      tableDue = true;
      loop.wake();
    },
    storedLease: () => ({ token: randomUUID(), ms: storedLeaseMs }),
    take(deliveries, leasedAt, committed) {
      if (stopping) {
        // Stored during the shutdown: back to the table for another worker, once there.
        void (committed ?? Promise.resolve(true))
          .then((stored) => (stored ? releaseLeases(options.pool, deliveries) : undefined))
          .catch((error: unknown) =>
            log.warn({ err: error, deliveries: deliveries.length }, "releasing queued leases failed"),
          );
        return;
      }
      const entries = new Set<Queued>();
      for (const delivery of deliveries) {
        const queue = queues.get(delivery.endpoint_id);
        const entry = { delivery, leaseEnds: leasedAt + storedLeaseMs, confirmedAt: leasedAt, committed };
        entries.add(entry);
        if (queue) queue.push(entry);
        else queues.set(delivery.endpoint_id, [entry]);
      }
      queuedCount += deliveries.length;
      // A store that did not commit: those not launched yet are not sent either.
      void committed?.then((stored) => {
        if (stored) return;
        for (const endpointId of new Set(deliveries.map((delivery) => delivery.endpoint_id))) {
          drop(endpointId, (entry) => entries.has(entry));
        }
      });
      pump();
    },
    queued: (endpointId) => queues.get(endpointId)?.length ?? 0,
    queuedTotal: () => queuedCount,
  };
}
