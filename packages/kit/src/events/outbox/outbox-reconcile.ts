import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { Pool } from "../../db/db.js";
import type { NatsConnection, StreamRoute } from "../nats.js";

/**
 * How far before `since` the stream is read: rows' `created_at` is the database's clock, a
 * message's time the NATS server's, and a row is published some time after it was written.
 */
const CLOCK_SLACK_MS = 5 * 60 * 1000;

export type ReconcileResult = {
  /** Published rows written since `since` that were looked for in their streams. */
  checked: number;
  /** Those their stream lacked: stamped unpublished again, for the relay to publish. */
  republished: string[];
};

/**
 * Makes the relay publish again what the streams lost (docs/operations.md#backup-and-restore):
 * after NATS lost data, or Postgres was restored from a backup older than the streams' state,
 * rows stamped `published_at` may have no message in their stream, and the relay, which only
 * publishes unstamped rows, would never send them. For every row of the outbox (the pool's
 * schema) written since `since` and published, it looks for a message with `Nats-Msg-Id` = the
 * row's id in its route's stream (read from `since`, headers only, with an ordered consumer) and
 * clears `published_at` of the rows not found. The relay's sweep then
 * publishes them with their own ids, so running this twice, or while the relay runs, republishes
 * nothing twice: a message the stream has is never looked for again, and a repeat within the
 * stream's duplicate window is dropped by JetStream, past it by the consumers' unique event id.
 * For the same reason a message removed from a stream that still remembers its id (within the
 * 2-minute window) is not stored again: run it once the window has passed.
 */
export async function reconcileOutbox(options: {
  pool: Pool;
  nc: NatsConnection;
  routes: StreamRoute[];
  since: Date;
}): Promise<ReconcileResult> {
  const roots = options.routes.map((route) => route.root);
  const rows = await options.pool.query<{ id: string; root: string }>(
    `SELECT id, split_part(subject, '.', 1) AS root FROM outbox
     WHERE published_at IS NOT NULL AND created_at >= $1 AND split_part(subject, '.', 1) = ANY($2)`,
    [options.since, roots],
  );
  const missing: string[] = [];
  for (const route of options.routes) {
    const wanted = rows.rows.filter((row) => row.root === route.root);
    if (wanted.length === 0) continue;
    const present = await messageIds(options.nc, route, new Date(options.since.getTime() - CLOCK_SLACK_MS));
    for (const row of wanted) if (!present.has(row.id)) missing.push(row.id);
  }
  if (missing.length > 0) {
    await options.pool.query(
      "UPDATE outbox SET published_at = NULL WHERE id = ANY($1::uuid[]) AND published_at IS NOT NULL",
      [missing],
    );
  }
  return { checked: rows.rows.length, republished: missing };
}

/** The `Nats-Msg-Id` of every message the route's stream holds from `from` on. */
async function messageIds(nc: NatsConnection, route: StreamRoute, from: Date): Promise<Set<string>> {
  const ids = new Set<string>();
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(route.stream).catch(() => null);
  // A stream lost with NATS, or holding nothing since then: every row is missing.
  if (!info || info.state.messages === 0 || new Date(info.state.last_ts) < from) return ids;
  // No subject filter: the route's stream holds only its subjects (ensureStreams).
  const consumer = await jetstream(nc).consumers.get(route.stream, {
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: from.toISOString(),
    headers_only: true,
  });
  const messages = await consumer.consume({ max_messages: 1_000 });
  try {
    for await (const message of messages) {
      const id = message.headers?.get("Nats-Msg-Id");
      if (id) ids.add(id);
      // Read up to what the stream held when asked; what is published meanwhile is the relay's.
      if (message.info.pending === 0) break;
    }
  } finally {
    await messages.close();
  }
  return ids;
}
