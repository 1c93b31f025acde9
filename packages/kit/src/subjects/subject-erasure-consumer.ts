import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { AppError } from "../core/errors.js";
import type { Queryable } from "../db/db.js";
import { createDurableConsumer, type DurableConsumer } from "../events/durable-consumer.js";
import type { NatsConnection, StreamRoute } from "../events/nats.js";
import { ERASURE_CONSUMERS } from "../events/nats-permissions.js";

/** The event that starts a subject's erasure in every plane (docs/subjects.md#erasure). */
export const ERASURE_REQUESTED = "subject.erasure_requested";

/** A plane that erases on `subject.erasure_requested` and reports back to control. */
export type ErasingPlane = keyof typeof ERASURE_CONSUMERS;

/** The subject to erase, as its event names it. */
export type ErasureOrder = { environmentId: string; subjectId: string; requestedAt: string };

function orderOf(value: unknown): ErasureOrder | null {
  if (typeof value !== "object" || value === null) return null;
  const event = value as { type?: unknown; environment_id?: unknown; data?: unknown };
  const data = event.data as { subject_id?: unknown; requested_at?: unknown } | undefined;
  if (event.type !== ERASURE_REQUESTED || typeof event.environment_id !== "string") return null;
  if (typeof data?.subject_id !== "string" || typeof data.requested_at !== "string") return null;
  return { environmentId: event.environment_id, subjectId: data.subject_id, requestedAt: data.requested_at };
}

/**
 * A plane's part of every subject erasure: a durable consumer of the `subject.erasure_requested`
 * events (its own, so each plane gets every erasure) that erases what the plane holds about the
 * subject, then reports it done to control. The message is acked only after both, so a crash
 * or an unreachable control at any moment means the event comes again: `erase` must be
 * idempotent (a second run finds nothing left), and so is the report.
 */
export function createSubjectErasureConsumer(options: {
  plane: ErasingPlane;
  nc: NatsConnection;
  /** The events stream. */
  route: StreamRoute;
  logger: Logger;
  erase: (order: ErasureOrder) => Promise<void>;
  report: (order: ErasureOrder) => Promise<void>;
  metrics?: Registry;
}): DurableConsumer {
  const log = options.logger.child({ component: "erasure-consumer" });
  return createDurableConsumer<ErasureOrder>({
    nc: options.nc,
    route: options.route,
    durable: ERASURE_CONSUMERS[options.plane],
    filter: `*.${ERASURE_REQUESTED}`,
    logger: log,
    // An erasure of a large subject takes a while; a message redelivered meanwhile would run it twice at once.
    ackWaitMs: 60_000,
    batch: 16,
    ...(options.metrics && { metrics: options.metrics }),
    decode: (message) => orderOf(message.json()),
    async handle(orders) {
      for (const order of orders) {
        await options.erase(order);
        try {
          await options.report(order);
        } catch (error) {
          // Control holds no such erasure: the event is a sample (`evalp trigger`, whose subject
          // exists nowhere) or outlived its erasure. Redelivering it would stop every erasure behind it.
          if (!(error instanceof ConnectError && error.code === Code.NotFound)) throw error;
          log.warn(
            { subject_id: order.subjectId, plane: options.plane },
            "erasure event without an erasure: skipped",
          );
          continue;
        }
        log.info({ subject_id: order.subjectId, plane: options.plane }, "subject erased");
      }
      return undefined;
    },
  });
}

/**
 * Serializes, per subject and for the rest of the transaction, a plane's erasure of a subject
 * with the writes that add data about that subject (a new evaluation, a continuous answer). Such
 * a write takes it, then checks `erasedSubject`: either it commits before the erasure reads what
 * to erase (and is erased with the rest), or it sees the erasure and refuses. Without it, a write
 * checked against control just before the tombstone could commit just after the plane erased.
 */
export async function lockSubjectData(db: Queryable, subjectId: string): Promise<void> {
  await db.query(
    "SELECT pg_advisory_xact_lock(hashtextextended('subject-data:' || current_schema() || ':' || $1, 0))",
    [subjectId],
  );
}

/** The plane's record that it erased a subject (its `erased_subjects` table), stored in the erasure's transaction. */
export async function recordErasedSubject(
  db: Queryable,
  environmentId: string,
  subjectId: string,
): Promise<void> {
  await db.query(
    `INSERT INTO erased_subjects (subject_id, environment_id) VALUES ($1, $2) ON CONFLICT (subject_id) DO NOTHING`,
    [subjectId, environmentId],
  );
}

/** 404 `subject_erased` when this plane erased the subject; call it under `lockSubjectData`. */
export async function refuseErasedSubject(db: Queryable, subjectId: string): Promise<void> {
  const found = await db.query<{ erased_at: Date }>(
    "SELECT erased_at FROM erased_subjects WHERE subject_id = $1",
    [subjectId],
  );
  const row = found.rows[0];
  if (!row) return;
  throw new AppError("subject_erased", "This subject was erased.", {
    resource: "subject",
    subject_id: subjectId,
    erased_at: row.erased_at.toISOString(),
  });
}
