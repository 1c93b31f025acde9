import { AppError } from "../core/errors.js";
import type { Queryable } from "../db/db.js";
import type { QuotaCounter } from "./quota-counters.js";

/**
 * Serializes, for the rest of the transaction, every creation that counts against one counter
 * of one environment. Whichever plane owns the counted rows takes this lock in its own database
 * transaction before counting them, so two concurrent creations are checked one after the
 * other and can never pass a limit together.
 */
export async function lockQuotaCounter(
  tx: Queryable,
  environmentId: string,
  counter: QuotaCounter,
): Promise<void> {
  await tx.query(`SELECT ${quotaLockSql("$1")}`, [quotaLockKey(environmentId, counter)]);
}

/**
 * The lock of `lockQuotaCounter` as an SQL expression over the parameter that holds
 * `quotaLockKey(…)`, for a caller that takes it within a statement of its own (a scope check).
 */
export function quotaLockSql(keyParameter: string): string {
  return `pg_advisory_xact_lock(hashtextextended(${keyParameter}, 0))`;
}

export function quotaLockKey(environmentId: string, counter: QuotaCounter): string {
  return `quota:${environmentId}:${counter}`;
}

/** The contract's 409 for a creation past a limit. */
export function quotaExceeded(counter: QuotaCounter, limit: number, usage: number): AppError {
  return new AppError("quota_exceeded", `The environment's ${counter} quota is used up.`, {
    counter,
    limit,
    usage,
  });
}

/**
 * Checks that `amount` more fits under the counter's limit: locks the counter, counts the
 * owning rows with `usage` (inside the same transaction), and throws 409 `quota_exceeded`
 * when it would not fit. The caller inserts after it returns, still inside the transaction.
 */
export async function enforceQuota(
  tx: Queryable,
  options: {
    environmentId: string;
    counter: QuotaCounter;
    limit: () => Promise<number>;
    usage: () => Promise<number>;
    amount?: number;
  },
): Promise<{ limit: number; usage: number }> {
  // The limit (another plane's answer, over the network) is asked for before the lock is taken,
  // so that creations queued on the lock do not also wait for each other's round trips. A limit
  // changed meanwhile was never serialized with creations: quota updates do not take this lock.
  const asked = options.limit();
  asked.catch(() => {});
  await lockQuotaCounter(tx, options.environmentId, options.counter);
  const [limit, usage] = await Promise.all([asked, options.usage()]);
  if (usage + (options.amount ?? 1) > limit) throw quotaExceeded(options.counter, limit, usage);
  return { limit, usage };
}
