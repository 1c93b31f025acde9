import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

/**
 * Random bytes for this many ids are drawn at once: `v7()` alone asks the CSPRNG for 16 bytes at
 * every call (`crypto.getRandomValues`), which cost several microseconds an id, several times
 * the rest of making it, where the webhooks plane makes two per delivery. Node's `randomUUID`
 * caches its randomness the same way.
 */
const IDS_PER_DRAW = 256;
const randomness = new Uint8Array(16 * IDS_PER_DRAW);
const view = new DataView(randomness.buffer);
let drawn = IDS_PER_DRAW;
/** The millisecond and counter of the last id, so that ids made in one millisecond still sort in the order made. */
const last = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/** A new time-ordered id (UUID v7), the form of every id the interface calls uuid. */
export function newId(): string {
  if (drawn === IDS_PER_DRAW) {
    randomFillSync(randomness);
    drawn = 0;
  }
  const at = 16 * drawn;
  const random = randomness.subarray(at, at + 16);
  drawn += 1;
  // As `v7()` keeps its own: a new millisecond starts the counter at random, a repeated one
  // counts on (and a counter that wraps moves on to the next millisecond).
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    // Bytes 6 to 9 of the random ones, 31 bits, as `v7()` draws it.
    last.seq = view.getUint32(at + 6) & 0x7fffffff;
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs += 1;
  }
  return v7({ random, msecs: last.msecs, seq: last.seq });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a well-formed UUID; path ids that are not answer 404 rather than reach the database. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
