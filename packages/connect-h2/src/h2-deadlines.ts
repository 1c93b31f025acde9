/**
 * The deadlines of a server's calls on one timer, armed for the earliest. A timer per call (what
 * connect's handler makes) is cheap to set but not to keep: the planes' calls end within a
 * millisecond, long before their deadline, so Node's list of timers of that duration empties and
 * is made again (a priority-queue insert) call after call. Here a call is an entry in a set, and
 * the one timer fires about once per deadline's length, at the earliest deadline still pending,
 * aborting every call past its own.
 */
export class Deadlines {
  readonly #pending = new Set<Deadline>();
  #timer: NodeJS.Timeout | undefined;
  #armedAt = Number.POSITIVE_INFINITY;

  /**
   * Calls `expire` at `at` (a `performance.now()` time) unless the returned function is called
   * first. A deadline already past is not kept: it is for the caller to expire its call at once.
   */
  add(at: number, expire: () => void): () => void {
    const deadline: Deadline = { at, expire };
    this.#pending.add(deadline);
    if (at < this.#armedAt) this.#arm(at);
    return () => {
      this.#pending.delete(deadline);
    };
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#armedAt = at;
    this.#timer = setTimeout(() => this.#fire(), Math.max(at - performance.now(), 0));
    // The calls' streams keep the process alive while they run; a deadline of a call answered
    // long ago does not.
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    const expired: Deadline[] = [];
    for (const deadline of this.#pending) {
      if (deadline.at <= now) expired.push(deadline);
      else if (deadline.at < next) next = deadline.at;
    }
    for (const deadline of expired) this.#pending.delete(deadline);
    if (next < Number.POSITIVE_INFINITY) this.#arm(next);
    // In the order of their deadlines, also when a busy process fires late for several.
    expired.sort((a, b) => a.at - b.at);
    for (const deadline of expired) deadline.expire();
  }
}

type Deadline = { readonly at: number; readonly expire: () => void };
