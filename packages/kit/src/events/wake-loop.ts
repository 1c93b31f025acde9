import type { Logger } from "pino";

/**
 * What a pass asks of its loop: how long to sleep before the next pass (0: go on at once), or
 * nothing for the loop's interval.
 */
export type PassResult = number | undefined;

/** A background loop of passes that sleeps between them until woken, backs off on errors. */
export type WakeLoop = {
  /** Starts the passes (the first at once); a second call changes nothing. */
  start(): void;
  /** Cuts the current sleep short, or, during a pass, has the next one run right after it. */
  wake(): void;
  /** The pass in hand finishes, no other starts; resolves once the loop has ended. */
  stop(): Promise<void>;
};

export type WakeLoopOptions = {
  /** One round of work; what it resolves with sets the sleep before the next. */
  pass: () => Promise<PassResult>;
  /** The longest sleep between passes without a wake-up. */
  intervalMs: number;
  logger: Logger;
  /** Logged (warn, with `err` and `retry_in_ms`) when a pass throws. */
  failure: string;
  /** Told of a failed pass before the backoff (to drop state it can no longer trust). */
  onError?: (error: unknown) => void;
  /** The first backoff after a failure; it doubles with each failure in a row. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
};

/**
 * The one loop of every background worker (the outbox relay, the webhook dispatcher, the
 * durable consumers, the agent sweeper): a failing pass is retried after a backoff that doubles
 * up to `maxBackoffMs` and resets with the first pass that succeeds, so that an outage of
 * Postgres or NATS costs neither a busy loop nor a long wait once it is over.
 */
export function createWakeLoop(options: WakeLoopOptions): WakeLoop {
  const minBackoffMs = options.minBackoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 5_000;
  let stopped = false;
  let pending = false;
  let wakeUp: (() => void) | null = null;
  let loop: Promise<void> | null = null;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        wakeUp = null;
        resolve();
      }
      wakeUp = done;
    });
  }

  async function run(): Promise<void> {
    let backoff = 0;
    while (!stopped) {
      pending = false;
      let delay: number;
      try {
        delay = (await options.pass()) ?? options.intervalMs;
        backoff = 0;
      } catch (error) {
        if (stopped) break;
        backoff = Math.min(Math.max(backoff * 2, minBackoffMs), maxBackoffMs);
        options.logger.warn({ err: error, retry_in_ms: backoff }, options.failure);
        options.onError?.(error);
        await sleep(backoff);
        continue;
      }
      if (stopped || pending || delay <= 0) continue;
      await sleep(delay);
    }
  }

  return {
    start() {
      loop ??= run();
    },
    wake() {
      pending = true;
      wakeUp?.();
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
