import { create } from "@bufbuild/protobuf";
import { notFound, QUOTA_COUNTERS, type Queryable, type QuotaValues, quotaCountersMessage } from "@evalp/kit";
import { type Quotas, QuotasSchema } from "@evalp/proto/control/v1/quota";
import type { Deps } from "../deps.js";
import { SUBJECTS_COUNTED } from "./subject-import.js";
import { countPrograms } from "./subject-rows.js";

export type QuotaRow = QuotaValues & {
  environment_id: string;
  revision: number;
  schema_version: number;
  largest_behavioral_event_batch: number;
  largest_continuous_event_batch: number;
};

export const QUOTA_COLUMNS = `environment_id, ${QUOTA_COUNTERS.join(", ")}, revision, schema_version,
  largest_behavioral_event_batch, largest_continuous_event_batch`;

/**
 * Usage as counted from the rows that are the thing counted: subjects and programs live here;
 * evaluations, participant sessions, the largest behavioral event batch and webhook endpoints
 * are counted by the planes that own them, asked over Connect (a plane that is down makes this
 * fail: usage is never guessed).
 */
/** The environment's subjects, as the count's shards sum them (no scan; db/subject-import.ts). */
export async function countSubjects(db: Queryable, environmentId: string): Promise<number> {
  const found = await db.query<{ subjects: string }>(SUBJECTS_COUNTED, [environmentId]);
  return Number(found.rows[0]?.subjects ?? 0);
}

export async function usageOf(db: Queryable, row: QuotaRow, planes: Deps["usage"]): Promise<QuotaValues> {
  const [interview, webhooks] = await Promise.all([
    planes.interview.countUsage({ environmentId: row.environment_id }),
    planes.webhooks.countUsage({ environmentId: row.environment_id }),
  ]);
  const owned = { ...interview.usage, ...webhooks.usage };
  const counts = {
    subjects: await countSubjects(db, row.environment_id),
    programs: await countPrograms(db, row.environment_id),
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
    limits: quotaCountersMessage(row),
    usage: quotaCountersMessage(await usageOf(db, row, planes)),
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

/** The default quotas of a new environment. */
export async function insertQuotas(db: Queryable, environmentId: string): Promise<void> {
  await db.query("INSERT INTO quotas (environment_id) VALUES ($1)", [environmentId]);
}

/**
 * Replaces the seven limits when `expectedRevision` is the current one, the check and the write
 * one UPDATE; the new row, or undefined when the revision (or the environment) differs.
 */
export async function replaceLimits(
  db: Queryable,
  environmentId: string,
  expectedRevision: number,
  limits: QuotaValues,
): Promise<QuotaRow | undefined> {
  const assignments = QUOTA_COUNTERS.map((counter, index) => `${counter} = $${index + 3}`).join(", ");
  const updated = await db.query<QuotaRow>(
    `UPDATE quotas SET ${assignments}, revision = revision + 1,
       updated_at = date_trunc('milliseconds', clock_timestamp())
     WHERE environment_id = $1 AND revision = $2 RETURNING ${QUOTA_COLUMNS}`,
    [environmentId, expectedRevision, ...QUOTA_COUNTERS.map((counter) => limits[counter])],
  );
  return updated.rows[0];
}

/** The current revision of an environment's quotas, if it has them. */
export async function quotaRevision(db: Queryable, environmentId: string): Promise<number | undefined> {
  const current = await db.query<{ revision: number }>(
    "SELECT revision FROM quotas WHERE environment_id = $1",
    [environmentId],
  );
  return current.rows[0]?.revision;
}
