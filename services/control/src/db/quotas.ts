import { create } from "@bufbuild/protobuf";
import { notFound, type Queryable } from "@evalp/kit";
import {
  type QuotaCounters,
  QuotaCountersSchema,
  type Quotas,
  QuotasSchema,
} from "@evalp/proto/control/v1/quota";
import type { Deps } from "../deps.js";

/** The seven counters of contract §5b, as the API names them. */
export const COUNTERS = [
  "active_participant_sessions",
  "active_subjects",
  "behavioral_event_batch_size",
  "continuous_event_batch_size",
  "evaluations",
  "programs",
  "webhook_endpoints",
] as const;
export type Counter = (typeof COUNTERS)[number];

export type QuotaRow = Record<Counter, number> & {
  environment_id: string;
  revision: number;
  schema_version: number;
  largest_behavioral_event_batch: number;
  largest_continuous_event_batch: number;
};

export const QUOTA_COLUMNS = `environment_id, ${COUNTERS.join(", ")}, revision, schema_version,
  largest_behavioral_event_batch, largest_continuous_event_batch`;

/** Proto field names of the counters (camel case), for reading and writing QuotaCounters. */
const FIELD: Record<Counter, keyof Omit<QuotaCounters, "$typeName" | "$unknown">> = {
  active_participant_sessions: "activeParticipantSessions",
  active_subjects: "activeSubjects",
  behavioral_event_batch_size: "behavioralEventBatchSize",
  continuous_event_batch_size: "continuousEventBatchSize",
  evaluations: "evaluations",
  programs: "programs",
  webhook_endpoints: "webhookEndpoints",
};

export function countersMessage(values: Record<Counter, number>): QuotaCounters {
  const counters = create(QuotaCountersSchema);
  for (const counter of COUNTERS) counters[FIELD[counter]] = BigInt(values[counter]);
  return counters;
}

export function countersFromMessage(message: QuotaCounters | undefined): Record<Counter, number> {
  const values = {} as Record<Counter, number>;
  for (const counter of COUNTERS) values[counter] = Number(message?.[FIELD[counter]] ?? 0n);
  return values;
}

/**
 * Usage as counted from the rows that are the thing counted: subjects and programs live here;
 * evaluations, participant sessions, the largest behavioral event batch and webhook endpoints
 * are counted by the planes that own them, asked over Connect (a plane that is down makes this
 * fail: usage is never guessed).
 */
/** The environment's subjects, as the `subject_counts` trigger keeps them (no scan). */
export async function countSubjects(db: Queryable, environmentId: string): Promise<number> {
  const found = await db.query<{ subjects: string }>(
    "SELECT subjects FROM subject_counts WHERE environment_id = $1",
    [environmentId],
  );
  return Number(found.rows[0]?.subjects ?? 0);
}

export async function usageOf(
  db: Queryable,
  row: QuotaRow,
  planes: Deps["usage"],
): Promise<Record<Counter, number>> {
  const [interview, webhooks] = await Promise.all([
    planes.interview.countUsage({ environmentId: row.environment_id }),
    planes.webhooks.countUsage({ environmentId: row.environment_id }),
  ]);
  const owned = { ...interview.usage, ...webhooks.usage };
  const counted = await db.query<{ programs: number }>(
    "SELECT count(*)::int AS programs FROM programs WHERE environment_id = $1",
    [row.environment_id],
  );
  const counts = {
    subjects: await countSubjects(db, row.environment_id),
    programs: counted.rows[0]?.programs ?? 0,
  };
  return {
    active_participant_sessions: Number(owned.active_participant_sessions ?? 0n),
    active_subjects: counts.subjects,
    // The interview plane accepts behavioral event batches and keeps the largest.
    behavioral_event_batch_size: Number(owned.behavioral_event_batch_size ?? 0n),
    continuous_event_batch_size: row.largest_continuous_event_batch,
    evaluations: Number(owned.evaluations ?? 0n),
    programs: counts.programs,
    webhook_endpoints: Number(owned.webhook_endpoints ?? 0n),
  };
}

export async function quotasMessage(db: Queryable, row: QuotaRow, planes: Deps["usage"]): Promise<Quotas> {
  return create(QuotasSchema, {
    environmentId: row.environment_id,
    limits: countersMessage(row),
    usage: countersMessage(await usageOf(db, row, planes)),
    revision: row.revision,
    schemaVersion: row.schema_version,
  });
}

/** The environment's quota row (its limits and revision); 404 when the environment has none. */
export async function readQuotas(db: Queryable, environmentId: string): Promise<QuotaRow> {
  const found = await db.query<QuotaRow>(`SELECT ${QUOTA_COLUMNS} FROM quotas WHERE environment_id = $1`, [
    environmentId,
  ]);
  const row = found.rows[0];
  if (!row) throw notFound("environment");
  return row;
}
