import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { idList } from "../../db/array-literals.js";
import type { Pool } from "../../db/db.js";
import { runBatch } from "../../db/statement-batch.js";
import type { TraceCarrier } from "../../telemetry/trace-context.js";
import { ensureStreams, type NatsConnection, routedSubject, type StreamRoute } from "../nats.js";
import { createWakeLoop } from "../wake-loop.js";
import type { OutboxValues } from "./outbox.js";
import { onCommittedOutboxRows } from "./outbox-handoff.js";
import { observeStreams, outboxPublishedCounter } from "./outbox-metrics.js";
import { tracePublish } from "./outbox-tracing.js";

/**
 * Stamps rows published: the relay's stamp right after commit, and the sweep's. It turns off the
 * wait for its own WAL flush (`synchronous_commit`, for its transaction only: the statement's own
 * when it runs alone): a stamp lost to a crash of the database only publishes its rows again. Not
 * a named (prepared) statement: the relay must work through a pooler that does not keep prepared
 * statements (PgBouncer before 1.21), where a name prepared on one server connection is unknown
 * on the next, and every stamp would fail.
 */
const stampPublished = (ids: string[]): { text: string; values: unknown[] } => ({
  text: `WITH relaxed AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))
         UPDATE outbox SET published_at = clock_timestamp()
         WHERE id = ANY($1::uuid[]) AND published_at IS NULL AND EXISTS (SELECT 1 FROM relaxed)`,
  values: [idList(ids)],
});

/** Publishes a service's outbox to JetStream; one per emitting process. */
export type OutboxRelay = {
  /**
   * Starts relaying in the background: publishes the rows its process commits through the pool
   * as soon as they are, and ensures the streams (retrying), then sweeps what is left.
   */
  start(): Promise<void>;
  /** Finishes the publishes and the batch in hand (their acks and stamps), then stops. */
  stop(): Promise<void>;
  /** Runs a sweep soon. */
  wake(): void;
};

export type OutboxRelayOptions = {
  /** The service's pool, bound to the schema whose `outbox` table is relayed. */
  pool: Pool;
  nc: NatsConnection;
  /** The subject roots relayed and their streams; rows of other roots are left to other relays. */
  routes: StreamRoute[];
  logger: Logger;
  /** Rows claimed, published and stamped per transaction of the sweep. */
  batchSize?: number;
  /** The time between two sweeps. */
  intervalMs?: number;
  /**
   * How old an unpublished row must be for the sweep to take it: younger ones are the writing
   * process's to publish (a few seconds: a sweep of a row its writer is publishing only repeats it).
   */
  sweepAfterMs?: number;
  /** How long a publish waits for JetStream's ack before the batch is tried again. */
  publishTimeoutMs?: number;
  /**
   * How long rows published right after their commit wait, acked, to be stamped together: one
   * UPDATE (and commit) per window rather than per event-loop turn, which under steady writes
   * holds a single row.
   */
  stampDelayMs?: number;
  /** Where the rows published are counted (`evalp_outbox_published_total`). */
  metrics?: Registry;
  /** Told the subjects of the rows of each batch once it is published and committed. */
  onPublished?: (subjects: string[]) => void;
};

type OutboxRow = { id: string; subject: string; payload: string; trace_context: TraceCarrier | null };

/**
 * The transactional outbox's other half (docs/webhooks.md), in two parts.
 * - Right after commit: the rows its own process commits through the pool (outbox-handoff.ts)
 *   are published, those of one event-loop turn together, in the order they were committed, each
 *   to its stream with `Nats-Msg-Id` = row id; once JetStream acked them they are stamped
 *   `published_at`. No round trip to Postgres before the publish, and no NOTIFY on the writer's
 *   commit.
 * - The sweep, for what that path lost (its process died between commit and stamp, a publish
 *   failed, the row was written by another process): in one transaction per batch it claims
 *   unpublished rows older than `sweepAfterMs` in the order they were written (`FOR UPDATE SKIP
 *   LOCKED`, and a transaction advisory lock so that replicas take turns rather than interleave
 *   batches), publishes them, waits for every ack and only then stamps them and commits.
 * A row is published at least once: a crash before the stamp publishes it again, and JetStream's
 * duplicate window (or, past it, the consumer's unique delivery) absorbs the repeat.
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const batchSize = Math.trunc(options.batchSize ?? 256);
  const intervalMs = options.intervalMs ?? 1_000;
  const sweepAfterMs = Math.trunc(options.sweepAfterMs ?? 5_000);
  const publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
  const stampDelayMs = options.stampDelayMs ?? 50;
  const roots = options.routes.map((route) => route.root);
  const routeOf = new Map(options.routes.map((route) => [route.root, route]));
  const log = options.logger.child({ component: "outbox-relay" });
  let js: JetStreamClient | undefined;
  let stopped = false;
  let streamsReady = false;
  let schema = "";
  /** Rows committed in this event-loop turn, published together at its end. */
  let committed: OutboxValues[] = [];
  /** The publishes of committed rows still waiting for their acks, and the stamps under way. */
  const inFlight = new Set<Promise<void>>();
  /** Rows published after their commit and acked, waiting for the next stamp (`stampDelayMs`). */
  let acked: Array<{ id: string; subject: string }> = [];
  let stampTimer: NodeJS.Timeout | undefined;
  let unsubscribe = () => {};
  const publishedCount = options.metrics ? outboxPublishedCounter(options.metrics) : null;
  // How full its streams are: a full one refuses the relay's publishes.
  const unobserve = options.metrics ? observeStreams(options.metrics, options.nc, options.routes) : () => {};
  const lockKey = () => `outbox-relay:${schema}:${[...roots].sort().join(",")}`;

  async function publish(rows: OutboxRow[]): Promise<{ published: string[]; failed: unknown }> {
    js ??= jetstream(options.nc, { timeout: publishTimeoutMs });
    const client = js;
    const results = await Promise.allSettled(
      rows.map((row) => {
        const route = routeOf.get(row.subject.split(".", 1)[0] ?? "");
        if (!route) return Promise.reject(new Error(`no stream for subject ${row.subject}`));
        const subject = routedSubject(route, row.subject);
        return tracePublish(row, subject, (headers) =>
          client.publish(subject, row.payload, { msgID: row.id, timeout: publishTimeoutMs, headers }),
        );
      }),
    );
    const published = rows.filter((_, index) => results[index]?.status === "fulfilled").map((row) => row.id);
    const failure = results.find((result) => result.status === "rejected");
    return { published, failed: failure?.status === "rejected" ? failure.reason : null };
  }

  /** The rows a process committed, taken for publishing at the end of the event-loop turn. */
  function takeCommitted(rows: OutboxValues[]): void {
    if (stopped) return;
    const ours = rows.filter((row) => roots.includes(row[2].split(".", 1)[0] ?? ""));
    if (ours.length === 0) return;
    if (committed.length === 0) setImmediate(publishCommitted);
    committed.push(...ours);
  }

  function publishCommitted(): void {
    const rows = committed;
    committed = [];
    // Before the streams are known to exist, and once stopping, the sweep takes them.
    if (!streamsReady || stopped || rows.length === 0) return;
    const done = publishThenStamp(rows)
      .catch((error: unknown) => log.debug({ err: error }, "publish after commit failed: left to the sweep"))
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  }

  async function publishThenStamp(rows: OutboxValues[]): Promise<void> {
    const { published, failed } = await publish(
      rows.map(([id, , subject, , payload, , traceContext]) => ({
        id,
        subject,
        payload,
        trace_context: traceContext,
      })),
    );
    const ids = new Set(published);
    if (ids.size > 0) {
      for (const row of rows) if (ids.has(row[0])) acked.push({ id: row[0], subject: row[2] });
      stampTimer ??= setTimeout(() => void stampAcked(), stampDelayMs).unref();
    }
    if (failed) throw failed;
  }

  /**
   * Stamps the acked rows `published_at`, as the sweep's stamp, without waiting for its WAL flush:
   * a stamp lost (to a crash, or a failure here, left to the sweep) only publishes the rows again.
   */
  async function stampAcked(): Promise<void> {
    clearTimeout(stampTimer);
    stampTimer = undefined;
    const rows = acked;
    acked = [];
    if (rows.length === 0) return;
    // Built inside the chain: a failure of any kind is logged and left to the sweep.
    const done = (async () => options.pool.query(stampPublished(rows.map((row) => row.id))))()
      .then(
        () => {
          publishedCount?.inc({ schema }, rows.length);
          options.onPublished?.(rows.map((row) => row.subject));
        },
        (error: unknown) => log.debug({ err: error }, "stamp after publish failed: left to the sweep"),
      )
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
    await done;
  }

  /** One batch of the sweep; resolves with the number of rows it claimed. */
  async function relayBatch(): Promise<number> {
    const client = await options.pool.connect();
    try {
      // One round trip (statement-batch.ts): the transaction, our turn (a transaction advisory
      // lock, so that replicas take turns rather than interleave batches; without it, another
      // replica is relaying this outbox and no row is claimed) and the batch. The stamp need not
      // wait for its WAL flush (synchronous_commit off): a stamp lost to a crash of the database
      // only publishes its rows again, which JetStream's duplicate window (or, past it, the
      // consumer's unique delivery) absorbs, as after a crash of the relay.
      const [, claimedResult] = await runBatch(client, [
        { text: "BEGIN" },
        {
          text: `WITH turn AS MATERIALIZED (
                   SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok,
                          set_config('synchronous_commit', 'off', true))
                 SELECT id, subject, payload::text AS payload, trace_context FROM outbox
                 WHERE (SELECT ok FROM turn) AND published_at IS NULL
                   AND created_at < clock_timestamp() - make_interval(secs => $2::double precision)
                   AND split_part(subject, '.', 1) = ANY($3::text[])
                 ORDER BY created_at, id LIMIT $4 FOR UPDATE OF outbox SKIP LOCKED`,
          values: [lockKey(), sweepAfterMs / 1000, roots, batchSize],
        },
      ]);
      const claimed = (claimedResult?.rows ?? []) as OutboxRow[];
      if (claimed.length === 0) {
        await client.query("ROLLBACK");
        return 0;
      }
      const { published, failed } = await publish(claimed);
      // The stamp and the commit in one round trip.
      await runBatch(client, [
        ...(published.length > 0 ? [stampPublished(published)] : []),
        { text: "COMMIT" },
      ]);
      if (published.length > 0) {
        publishedCount?.inc({ schema }, published.length);
        const stamped = new Set(published);
        options.onPublished?.(claimed.filter((row) => stamped.has(row.id)).map((row) => row.subject));
      }
      if (failed) throw failed;
      return claimed.length;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  const loop = createWakeLoop({
    logger: log,
    failure: "outbox relay pass failed",
    intervalMs,
    // A stream deleted under us (or a server started empty) is created again.
    onError: () => {
      streamsReady = false;
    },
    async pass() {
      if (!streamsReady) {
        await ensureStreams(options.nc, options.routes);
        streamsReady = true;
      }
      // A full batch leaves more behind: the next pass runs at once.
      return (await relayBatch()) >= batchSize ? 0 : undefined;
    },
  });

  return {
    async start() {
      const found = await options.pool.query<{ schema: string }>("SELECT current_schema() AS schema");
      schema = found.rows[0]?.schema ?? "";
      unsubscribe = onCommittedOutboxRows(options.pool, takeCommitted);
      // The streams ensured at once where NATS answers, so that rows committed from the start go
      // out right after their commit; otherwise the loop's first pass ensures them.
      await ensureStreams(options.nc, options.routes).then(
        () => {
          streamsReady = true;
        },
        (error: unknown) =>
          log.warn({ err: error }, "streams not ensured at start: the relay's loop tries again"),
      );
      loop.start();
    },
    async stop() {
      // What is committed in this turn is still published: stop comes after the servers drained.
      publishCommitted();
      stopped = true;
      unsubscribe();
      unobserve();
      await Promise.all(inFlight);
      // The rows just acked are stamped now rather than after the window.
      await stampAcked();
      await loop.stop();
    },
    wake: () => loop.wake(),
  };
}
