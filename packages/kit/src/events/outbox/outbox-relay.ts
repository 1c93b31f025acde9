import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import pg from "pg";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { isUuid } from "../../core/ids.js";
import { type Pool, withDefaultUser } from "../../db/db.js";
import type { TraceCarrier } from "../../telemetry/trace-context.js";
import { ensureStreams, type NatsConnection, routedSubject, type StreamRoute } from "../nats.js";
import { createWakeLoop } from "../wake-loop.js";
import { OUTBOX_CHANNEL } from "./outbox.js";
import { observeStreams, outboxPublishedCounter } from "./outbox-metrics.js";
import { tracePublish } from "./outbox-tracing.js";

/** Publishes a service's outbox to JetStream; one per emitting process. */
export type OutboxRelay = {
  /** Starts relaying in the background: ensures the streams (retrying), then claims and publishes. */
  start(): Promise<void>;
  /** Finishes the batch in hand (its acks and commit), then stops. */
  stop(): Promise<void>;
  /** Runs a pass soon (a writer committed rows). */
  wake(): void;
};

export type OutboxRelayOptions = {
  /** The service's pool, bound to the schema whose `outbox` table is relayed. */
  pool: Pool;
  nc: NatsConnection;
  /** The subject roots relayed and their streams; rows of other roots are left to other relays. */
  routes: StreamRoute[];
  logger: Logger;
  /** Where to LISTEN for committed rows; without it the relay only polls. */
  databaseUrl?: string;
  /** Rows claimed, published and stamped per transaction. */
  batchSize?: number;
  /** The longest a committed row waits when no notification arrives. */
  intervalMs?: number;
  /** How long a publish waits for JetStream's ack before the batch is tried again. */
  publishTimeoutMs?: number;
  /** Where the rows published are counted (`evalp_outbox_published_total`). */
  metrics?: Registry;
  /** Told the subjects of the rows of each batch once it is published and committed. */
  onPublished?: (subjects: string[]) => void;
};

type OutboxRow = { id: string; subject: string; payload: string; trace_context: TraceCarrier | null };

/**
 * The transactional outbox's other half (docs/webhooks.md). In one transaction per batch it claims
 * unpublished rows in the order they were written (`FOR UPDATE SKIP LOCKED`, and a transaction
 * advisory lock so that replicas take turns rather than interleave batches), publishes each to
 * its stream with `Nats-Msg-Id` = row id, waits for every ack and only then stamps
 * `published_at` and commits. A crash before the commit publishes the batch again, and
 * JetStream's duplicate window (or, past it, the consumer's unique delivery) absorbs the repeat.
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const batchSize = Math.trunc(options.batchSize ?? 256);
  const intervalMs = options.intervalMs ?? 1_000;
  const publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
  const roots = options.routes.map((route) => route.root);
  const routeOf = new Map(options.routes.map((route) => [route.root, route]));
  const log = options.logger.child({ component: "outbox-relay" });
  let js: JetStreamClient | undefined;
  let stopped = false;
  let streamsReady = false;
  let listener: pg.Client | null = null;
  let schema = "";
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

  /** One batch; resolves with the number of rows it claimed. */
  async function relayBatch(): Promise<number> {
    const client = await options.pool.connect();
    try {
      // One round trip: the transaction, our turn (a transaction advisory lock, so that replicas
      // take turns rather than interleave batches; without it, another replica is relaying this
      // outbox and no row is claimed) and the batch. The stamp need not wait for its WAL flush
      // (synchronous_commit off): a stamp lost to a crash of the database only publishes its rows
      // again, which JetStream's duplicate window (or, past it, the consumer's unique delivery)
      // absorbs, as after a crash of the relay. A multi-statement query takes no parameters, so
      // the values (the relay's own) are written into it as literals.
      const claimed = lastResult(
        await client.query<OutboxRow>(
          `BEGIN;
           WITH turn AS MATERIALIZED (
             SELECT pg_try_advisory_xact_lock(hashtextextended(${client.escapeLiteral(lockKey())}, 0)) AS ok,
                    set_config('synchronous_commit', 'off', true))
           SELECT id, subject, payload::text AS payload, trace_context FROM outbox
           WHERE (SELECT ok FROM turn) AND published_at IS NULL
             AND split_part(subject, '.', 1) = ANY(ARRAY[${roots.map((root) => client.escapeLiteral(root)).join(",")}]::text[])
           ORDER BY created_at, id LIMIT ${batchSize} FOR UPDATE OF outbox SKIP LOCKED`,
        ),
      );
      if (claimed.rows.length === 0) {
        await client.query("ROLLBACK");
        return 0;
      }
      const { published, failed } = await publish(claimed.rows);
      // The stamp and the commit in one round trip, the ids (uuids read from the table, checked
      // again) written into it.
      const ids = published.filter(isUuid);
      await client.query(
        ids.length > 0
          ? `UPDATE outbox SET published_at = clock_timestamp() WHERE id = ANY('{${ids.join(",")}}'::uuid[]); COMMIT`
          : "COMMIT",
      );
      if (published.length > 0) {
        publishedCount?.inc({ schema }, published.length);
        const stamped = new Set(published);
        options.onPublished?.(claimed.rows.filter((row) => stamped.has(row.id)).map((row) => row.subject));
      }
      if (failed) throw failed;
      return claimed.rows.length;
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

  async function listen(databaseUrl: string): Promise<void> {
    while (!stopped) {
      const client = new pg.Client({ connectionString: withDefaultUser(databaseUrl) });
      listener = client;
      const ended = new Promise<void>((resolve) => {
        client.on("error", () => resolve());
        client.on("end", () => resolve());
      });
      client.on("notification", (message) => {
        if (message.payload === schema) loop.wake();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
        // Rows committed while nobody listened are picked up now.
        loop.wake();
        await ended;
      } catch (error) {
        log.debug({ err: error }, "outbox listener lost its connection");
      } finally {
        await client.end().catch(() => {});
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }

  return {
    async start() {
      const found = await options.pool.query<{ schema: string }>("SELECT current_schema() AS schema");
      schema = found.rows[0]?.schema ?? "";
      if (options.databaseUrl) void listen(options.databaseUrl);
      loop.start();
    },
    async stop() {
      stopped = true;
      unobserve();
      await loop.stop();
      await listener?.end().catch(() => {});
    },
    wake: () => loop.wake(),
  };
}

/** The last result of a multi-statement query, which node-postgres answers with one result per statement. */
function lastResult<R extends pg.QueryResultRow>(
  answer: pg.QueryResult<R> | pg.QueryResult<R>[],
): pg.QueryResult<R> {
  return Array.isArray(answer) ? (answer.at(-1) as pg.QueryResult<R>) : answer;
}
