import type { Window } from "./round-trip.js";

/*
 * A gateway's share of the rate limit's windows (docs/http.md#rate-limiting). A request whose
 * windows this gateway holds counts of is counted here, with no round trip to Redis: when it holds
 * none, the admission takes `leaseSize(limit)` counts of the window at once (one INCRBY, the first
 * for the request that asked), and spends the rest on the requests that follow, until they run out
 * or the window ends. Every count is taken from Redis before it is spent, so no window ever admits
 * more than its limit, across any number of gateways; what leasing costs is the other way round: a
 * count taken and not spent by the window's end is lost, so a caller spread over G gateways may be
 * refused up to (G − 1) × leaseSize(limit) requests before its limit. Once a window's count is
 * past its limit it stays past it until the window ends, so a refused caller is refused here too.
 */

/** Counts taken of a window at once: a twentieth of its limit; one at a time below 40 (exact). */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.floor(limit / 20));
}

/** Counts `next`…`to` of a window, this gateway's to spend until `endsAt` (ms since the epoch). */
type Lease = { next: number; to: number; endsAt: number; limit: number };

/** How many windows a gateway holds counts of at most: past it, requests count one by one. */
const MAX_LEASES = 100_000;

export type WindowLeases = {
  /** This request's count in `key`'s window, from a lease this gateway holds; else undefined. */
  take(key: string): Window | undefined;
  /** Whether `take(key)` would answer from a lease (it takes nothing). */
  holds(key: string): boolean;
  /** Keeps what Redis granted for `key`: `window` is the request's count, `size` counts were taken from it on. */
  keep(key: string, window: Window, size: number, limit: number): void;
};

export function windowLeases(now: () => number = Date.now): WindowLeases {
  const leases = new Map<string, Lease>();

  /** Forgets the leases of windows that ended (a Map keeps insertion order: the oldest first). */
  const sweep = (at: number) => {
    for (const [key, lease] of leases) {
      if (lease.endsAt > at && leases.size < MAX_LEASES) return;
      leases.delete(key);
    }
  };

  /** `key`'s lease while it has a count to spend (a window past its limit always has). */
  const live = (key: string, at: number): Lease | undefined => {
    const lease = leases.get(key);
    if (!lease) return undefined;
    // A window past its limit is refused until it ends, whoever spends the counts.
    const exhausted = lease.next > lease.limit;
    if (lease.endsAt > at && (lease.next <= lease.to || exhausted)) return lease;
    leases.delete(key);
    return undefined;
  };

  return {
    holds: (key) => live(key, now()) !== undefined,
    take(key) {
      const at = now();
      const lease = live(key, at);
      if (!lease) return undefined;
      const count = lease.next;
      lease.next += 1;
      return { count, resetMs: lease.endsAt - at };
    },
    keep(key, window, size, limit) {
      if (size <= 1 && window.count <= limit) return;
      const at = now();
      sweep(at);
      leases.delete(key);
      leases.set(key, {
        next: window.count + 1,
        to: window.count + size - 1,
        endsAt: at + window.resetMs,
        limit,
      });
    },
  };
}
