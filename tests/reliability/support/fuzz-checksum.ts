import { jetstreamManager } from "@nats-io/jetstream";
import { expect, vi } from "vitest";
import type { Stack } from "../../api/support/stack.js";

/** The four schemas of the platform, one per plane. */
export const SCHEMAS = ["control", "platform", "interview", "webhooks"] as const;

/**
 * Tables a rejected request may legitimately change, left out of the checksum.
 *
 * `interview.agent_commands` keeps the final answer of every agent command by its id, refusals
 * (an error below 500, docs/errors.md) included, so that a command re-sent after a barge-in gets the same
 * answer (docs/interview.md#the-agent-protocol: command ids have Idempotency-Key semantics). Nothing else qualifies: the
 * audit trail, the outbox and every resource table must stay as they were, and idempotency
 * records and rate-limit counters live in Redis, not in the database.
 */
export const CHANGED_BY_REJECTED_REQUESTS = ["interview.agent_commands"];

/**
 * A stack whose database is quiet between requests: no rate limit to hit, and a failed webhook
 * attempt is retried only an hour later, so that nothing changes while a test watches it.
 */
export const QUIET_ENV = { RATE_LIMIT_PER_MINUTE: "1000000", WEBHOOK_RETRY_SCHEDULE_MS: "3600000" };

/** Per table (`schema.table`): its row count and the md5 of its rows in a stable order. */
export type Checksum = Record<string, string>;

/** Takes the checksum of every table of the four schemas, in one statement (one snapshot). */
export async function databaseChecksum(stack: Stack): Promise<Checksum> {
  const tables = await stack.db.query<{ name: string }>(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
       FROM information_schema.tables
      WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE'
      ORDER BY 1`,
    [SCHEMAS],
  );
  const names = tables.rows
    .map((row) => row.name)
    .filter((name) => !CHANGED_BY_REJECTED_REQUESTS.includes(name));
  const sql = names
    .map(
      (name) =>
        `SELECT '${name}' AS name, count(*) || ':' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) AS sum FROM ${name} t`,
    )
    .join(" UNION ALL ");
  const result = await stack.db.query<{ name: string; sum: string }>(sql);
  return Object.fromEntries(result.rows.map((row) => [row.name, row.sum]));
}

/** The tables whose checksum differs between two checksums. */
export function changedTables(before: Checksum, after: Checksum): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => before[name] !== after[name]).sort();
}

/**
 * Waits until what accepted requests set in motion has come to rest, and returns the checksum
 * then: every outbox row published, every consumer of the event and audit streams caught up
 * (audit records of the other planes, webhook deliveries), no delivery waiting for its first
 * attempt or leased by a worker, and two checksums in a row equal.
 */
export async function settle(stack: Stack): Promise<Checksum> {
  const outboxes = await stack.db.query<{ name: string }>(
    `SELECT quote_ident(table_schema) || '.outbox' AS name FROM information_schema.tables
      WHERE table_schema = ANY($1) AND table_name = 'outbox'`,
    [SCHEMAS],
  );
  const jsm = await jetstreamManager(stack.nats);
  const streams = [stack.config.EVENTS_STREAM, stack.config.AUDIT_STREAM, stack.config.WEBHOOKS_STREAM];
  let previous: Checksum | null = null;
  return vi.waitFor(
    async () => {
      for (const { name } of outboxes.rows) {
        const unpublished = await stack.db.query(`SELECT 1 FROM ${name} WHERE published_at IS NULL LIMIT 1`);
        expect(unpublished.rowCount, `${name} has unpublished rows`).toBe(0);
      }
      for (const stream of streams) {
        for await (const consumer of jsm.consumers.list(stream)) {
          expect(consumer.num_pending + consumer.num_ack_pending, `${stream} consumer behind`).toBe(0);
        }
      }
      const busy = await stack.db.query(
        `SELECT 1 FROM webhooks.webhook_deliveries
          WHERE status = 'pending' OR leased_until > clock_timestamp() LIMIT 1`,
      );
      expect(busy.rowCount, "webhook deliveries in flight").toBe(0);
      const current = await databaseChecksum(stack);
      const stable = previous !== null && changedTables(previous, current).length === 0;
      previous = current;
      expect(stable, "database still changing").toBe(true);
      return current;
    },
    { timeout: 15_000, interval: 100 },
  );
}
