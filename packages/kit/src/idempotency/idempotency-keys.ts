import { AsyncLocalStorage } from "node:async_hooks";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type pg from "pg";
import { AppError } from "../core/errors.js";
import type { PoolClient, Queryable } from "../db/db.js";
import { preparedStatement } from "../db/prepared-statements.js";
import { type RetentionTask, rowsOlderThan } from "../db/retention.js";
import { runBatch } from "../db/statement-batch.js";

/**
 * Headers of a call the gateway makes for a request that carries an Idempotency-Key
 * (docs/idempotency.md): the key's identity (a hash of the caller, method, route and key), the
 * request's fingerprint, and the key (base64url, 32 bytes) the plane seals the stored answer with.
 * The last is derived from the gateway's secret and the identity: a dump of a plane's table
 * reveals no answer (an API key's secret, a token) without it.
 */
export const IDEMPOTENCY_ID_HEADER = "x-evalp-idempotency-id";
export const IDEMPOTENCY_FINGERPRINT_HEADER = "x-evalp-idempotency-fingerprint";
export const IDEMPOTENCY_SEAL_HEADER = "x-evalp-idempotency-seal";

/** What a call carries about its request's Idempotency-Key (`metadataHeaders`). */
export type IdempotencyMetadata = { id: string; fingerprint: string; sealKey: string };

/**
 * The key an RPC serves under, while it runs: `open` until a transaction of the RPC records it
 * (`recording` while that transaction is open: another one beside it records nothing; back to
 * `open` if it rolls back), `answering` once that transaction's work is done and it waits, still
 * open, for the RPC's answer to commit with it (`holdCommit`), `recorded` once it committed,
 * `closed` once the RPC answered (work it left running records nothing).
 */
export type KeyInFlight = {
  rowId: string;
  fingerprint: string;
  state: "open" | "recording" | "answering" | "recorded" | "closed";
  /** While `answering`: the recording transaction, not committed yet. */
  held?: HeldCommit;
  /**
   * The RPC's answer as its stored outcome: `encoded`, the answer's message as the outcome keeps
   * it, and `sealed`, the outcome as stored (db.ts `commitWith`).
   */
  sealAnswer?: (answer: unknown) => { encoded: string; sealed: Buffer };
  /** The answer's `encoded` form, once it committed with the write: nothing is left to store. */
  committedAnswer?: string;
};

/** What the transaction's owner does once the held COMMIT is done: its outbox rows go on or are dropped. */
export type CommitHooks = { committed: () => void; abandoned: () => void };

/** A recording transaction whose COMMIT waits for the RPC's answer; `settled` once it is underway. */
type HeldCommit = { client: PoolClient; hooks: CommitHooks; timer: NodeJS.Timeout; settled?: Promise<void> };

/**
 * How long a recording transaction may wait for its RPC's answer before it commits without it:
 * it holds its row locks meanwhile, and a handler that does slow work after its transaction
 * (a mail, a peer's call) must not keep them. Its outcome is then stored after the commit.
 */
const HOLD_LIMIT_MS = 250;

const inFlight = new AsyncLocalStorage<KeyInFlight>();

/** Runs `work` (an RPC's handler) under `key`: the first transaction it commits records the key. */
export function runUnderKey<T>(key: KeyInFlight, work: () => Promise<T>): Promise<T> {
  return inFlight.run(key, work);
}

/** Thrown inside a transaction that found its key already committed by an earlier run. */
export class KeyAlreadyCommitted extends Error {
  override name = "KeyAlreadyCommitted";
}

/**
 * Prepared: every keyed write runs it, in BEGIN's round trip. A transaction advisory lock on the
 * key, tried without waiting, and the key's row, inserted if the lock was had and the row is not
 * there yet.
 */
const RECORD_KEY = preparedStatement(
  "kit.record_idempotency_key",
  `WITH try_lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('idempotency:' || $1::text, 0)) AS locked),
        inserted_row AS (
          INSERT INTO idempotency_keys (id, fingerprint) SELECT $1::text, $2::text
          FROM try_lock WHERE locked
          ON CONFLICT (id) DO NOTHING RETURNING 1)
   SELECT (SELECT locked FROM try_lock) AS locked, EXISTS (SELECT 1 FROM inserted_row) AS inserted`,
);

/**
 * Opens `withTransaction`'s transaction (BEGIN) and, when an RPC under a key runs its first
 * transaction, inserts the key's row there, so that the row exists if and only if the write
 * committed. A transaction advisory lock on the key, tried without waiting, tells a run still in
 * progress (its answer lost to a timeout, say) from none: 409 `idempotency_key_in_use` rather
 * than a second execution, or a wait as long as the first. A row already there (a run committed
 * between the interceptor's look-up and this) ends the transaction: the interceptor answers with
 * that run's outcome. Resolves with the key recorded, if any (it is `recorded` once committed).
 * BEGIN, the record and `first` (the transaction's first statement, whose result it answers) go
 * in one round trip (statement-batch.ts).
 */
export async function beginRecordingKey(
  client: PoolClient,
  first?: pg.QueryConfig,
): Promise<{ key: KeyInFlight | undefined; first: pg.QueryResult | undefined }> {
  const following = first ? [first] : [];
  const key = inFlight.getStore();
  if (key?.state !== "open") {
    const [, firstResult] = await runBatch(client, [{ text: "BEGIN" }, ...following]);
    return { key: undefined, first: firstResult };
  }
  // Taken before the first await: a transaction the RPC opens beside this one records nothing.
  key.state = "recording";
  try {
    const [, recorded, firstResult] = await runBatch(client, [
      { text: "BEGIN" },
      RECORD_KEY([key.rowId, key.fingerprint]),
      ...following,
    ]);
    const row = recorded?.rows[0] as { locked: boolean; inserted: boolean } | undefined;
    if (!row?.locked) throw keyInUse();
    if (!row.inserted) throw new KeyAlreadyCommitted();
    return { key, first: firstResult };
  } catch (error) {
    key.state = "open";
    throw error;
  }
}

/**
 * Called by `withTransaction` once the work of the transaction that recorded the key is done:
 * rather than committing, it leaves the transaction open (true: the caller must neither commit
 * nor release the client), so that the RPC's answer is stored in the same transaction as its
 * write (`commitHeld`). A process that dies between the two then leaves no key without its
 * outcome: either both committed (a retry is answered the stored outcome) or neither (a retry
 * runs the write). Any further use of the pool by the RPC commits it first (`settleHeldCommit`,
 * called by the pool on connect): the RPC's later reads see its write.
 */
export function holdCommit(key: KeyInFlight | undefined, client: PoolClient, hooks: CommitHooks): boolean {
  if (key?.state !== "recording") return false;
  key.state = "answering";
  const timer = setTimeout(() => void commitHeld(key).catch(() => {}), HOLD_LIMIT_MS);
  timer.unref();
  key.held = { client, hooks, timer };
  return true;
}

/**
 * Commits the key's held transaction, with `outcome` stored in the key's row when given; true
 * when the outcome committed with the write. False when there was no held transaction or it had
 * already been committed without the outcome (the caller stores the outcome apart). Throws when
 * the COMMIT failed: the write did not happen, and the key is `open` again.
 */
export async function commitHeld(key: KeyInFlight, outcome?: Buffer): Promise<boolean> {
  const held = key.held;
  if (!held) return false;
  if (held.settled) {
    await held.settled;
    return false;
  }
  clearTimeout(held.timer);
  let committed = false;
  held.settled = (async () => {
    try {
      // The outcome and the COMMIT in one round trip (the lock the write took is held until it
      // returns). A failed UPDATE skips the COMMIT and rejects; a transaction a failed statement
      // aborted answers COMMIT with ROLLBACK, and no error.
      const ended = (
        await runBatch(held.client, [
          ...(outcome ? [STORE_OUTCOME([key.rowId, outcome])] : []),
          { text: "COMMIT" },
        ])
      ).at(-1) as pg.QueryResult;
      committed = ended.command === "COMMIT";
    } catch (error) {
      held.hooks.abandoned();
      await held.client.query("ROLLBACK").catch(() => {});
      held.client.release(error instanceof Error ? error : true);
      if (key.state === "answering") key.state = "open";
      throw error;
    }
    held.client.release();
    if (committed) held.hooks.committed();
    else held.hooks.abandoned();
    if (key.state === "answering") key.state = committed ? "recorded" : "open";
  })();
  await held.settled;
  return committed && outcome !== undefined;
}

/**
 * Commits the held transaction of the RPC this call runs in, if any, before the RPC uses the pool
 * again; undefined (no wait) when there is none. A failed commit rejects: what the RPC does next
 * builds on a write that did not happen.
 */
export function settleHeldCommit(): Promise<void> | undefined {
  const key = inFlight.getStore();
  if (!key?.held) return undefined;
  return commitHeld(key).then(() => undefined);
}

/** 409 `idempotency_key_in_use`: a run under the key has not finished (or its answer is not stored yet). */
export function keyInUse(): AppError {
  return new AppError(
    "idempotency_key_in_use",
    "A request with this Idempotency-Key is still running.",
    {},
    {
      headers: { "Retry-After": "1" },
    },
  );
}

/** A recorded key: the request it was recorded for and its sealed outcome (null until stored). */
export type KeyRow = { fingerprint: string; outcome: Buffer | null };

/** Prepared: every keyed call looks its key up before it runs (kit's preparedStatement). */
const FIND_KEY = preparedStatement(
  "kit.find_idempotency_key",
  "SELECT fingerprint, outcome FROM idempotency_keys WHERE id = $1",
);

/** The row of a key, if its write committed. */
export async function findKey(db: Queryable, rowId: string): Promise<KeyRow | undefined> {
  const { rows } = await db.query<KeyRow>(FIND_KEY([rowId]));
  return rows[0];
}

/** Prepared: every keyed write stores its outcome with it (db.ts `commitWith`, `commitHeld`). */
const STORE_OUTCOME = preparedStatement(
  "kit.store_idempotency_outcome",
  "UPDATE idempotency_keys SET outcome = $2 WHERE id = $1",
);

/** Stores the outcome of a key's run once the RPC answered. */
export async function storeKeyOutcome(db: Queryable, rowId: string, outcome: Buffer): Promise<void> {
  await db.query(STORE_OUTCOME([rowId, outcome]));
}

/**
 * What a transaction that recorded `key` sends with its last statement and COMMIT so that the
 * RPC's answer commits with the write: the outcome's UPDATE, and the answer as the outcome keeps
 * it. Undefined when the transaction recorded no key (or the RPC's interceptor seals nothing).
 */
export function answerStatement(
  key: KeyInFlight | undefined,
  answer: unknown,
): { statement: pg.QueryConfig; encoded: string } | undefined {
  if (key?.state !== "recording" || !key.sealAnswer) return undefined;
  const { encoded, sealed } = key.sealAnswer(answer);
  return { statement: STORE_OUTCOME([key.rowId, sealed]), encoded };
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM under the key the gateway sent: IV, tag, ciphertext. */
export function sealOutcome(key: Buffer, plain: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

/** The plain outcome, or null when it was sealed under another key (the gateway's secret rotated). */
export function openOutcome(key: Buffer, sealed: Buffer): string | null {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      "utf8",
    );
  } catch {
    return null;
  }
}

/**
 * Keys recorded more than a day ago: the gateway keeps a key's record 24 h, and a retry after
 * that is a new request anyway (docs/idempotency.md).
 */
export function idempotencyRetention(): RetentionTask {
  return rowsOlderThan("idempotency_keys", "created_at", 1);
}
