import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Queryable } from "@evalp/kit";
import { type SubjectErasure, SubjectErasureSchema } from "@evalp/proto/control/v1/subject";

/** The planes that erase on the `subject.erasure_requested` event and report back (control erases at once). */
export const ERASING_PLANES = ["interview", "platform", "webhooks"] as const;
export type ErasingPlane = (typeof ERASING_PLANES)[number];

export function isErasingPlane(value: string): value is ErasingPlane {
  return (ERASING_PLANES as readonly string[]).includes(value);
}

export type ErasureRow = {
  subject_id: string;
  organization_id: string;
  app_id: string;
  environment_id: string;
  requested_at: Date;
  control_at: Date;
  interview_at: Date | null;
  platform_at: Date | null;
  webhooks_at: Date | null;
  completed_at: Date | null;
};

const ERASURE_COLUMNS = `subject_id, organization_id, app_id, environment_id, requested_at, control_at,
  interview_at, platform_at, webhooks_at, completed_at`;

export function erasureMessage(row: ErasureRow): SubjectErasure {
  const at = (date: Date | null) => (date ? timestampFromDate(date) : undefined);
  return create(SubjectErasureSchema, {
    subjectId: row.subject_id,
    requestedAt: timestampFromDate(row.requested_at),
    completedAt: at(row.completed_at),
    controlAt: at(row.control_at),
    interviewAt: at(row.interview_at),
    platformAt: at(row.platform_at),
    webhooksAt: at(row.webhooks_at),
  });
}

/** A subject's erasure, if one was asked; `lock` holds its row for the rest of the transaction. */
export async function findErasure(
  db: Queryable,
  environmentId: string,
  subjectId: string,
  lock = false,
): Promise<ErasureRow | undefined> {
  const found = await db.query<ErasureRow>(
    `SELECT ${ERASURE_COLUMNS} FROM subject_erasures WHERE subject_id = $1 AND environment_id = $2
     ${lock ? "FOR UPDATE" : ""}`,
    [subjectId, environmentId],
  );
  return found.rows[0];
}

/**
 * Control's part of an erasure, with the erasure's row: the subject becomes a tombstone (no
 * external id, an empty profile, `erased_at`), in the transaction that records the request.
 * The subject row must be locked by the caller; false when it was erased already.
 */
export async function tombstoneSubject(
  db: Queryable,
  ref: { organizationId: string; appId: string; environmentId: string },
  subjectId: string,
): Promise<ErasureRow | undefined> {
  const written = await db.query<ErasureRow>(
    `WITH erased AS (
       UPDATE subjects SET external_id = NULL, profile = '{}', erased_at = date_trunc('milliseconds', clock_timestamp()),
                           updated_at = date_trunc('milliseconds', clock_timestamp())
       WHERE id = $1 AND environment_id = $2 AND erased_at IS NULL
       RETURNING erased_at
     )
     INSERT INTO subject_erasures (subject_id, organization_id, app_id, environment_id, requested_at, control_at)
     SELECT $1, $3, $4, $2, erased_at, erased_at FROM erased
     RETURNING ${ERASURE_COLUMNS}`,
    [subjectId, ref.environmentId, ref.organizationId, ref.appId],
  );
  return written.rows[0];
}

/**
 * Records that `plane` erased what it held (the first report's time is kept), and completes the
 * erasure when it was the last plane. Answers the row and whether this call completed it (once).
 * The row must be locked by the caller.
 */
export async function markPlaneErased(
  db: Queryable,
  subjectId: string,
  plane: ErasingPlane,
): Promise<{ row: ErasureRow; completedNow: boolean } | undefined> {
  const column = `${plane}_at`;
  const updated = await db.query<ErasureRow & { was_completed: boolean }>(
    `UPDATE subject_erasures e
     SET ${column} = COALESCE(e.${column}, date_trunc('milliseconds', clock_timestamp())),
         completed_at = CASE
           WHEN e.completed_at IS NULL
            AND (${ERASING_PLANES.map((name) => (name === plane ? "TRUE" : `e.${name}_at IS NOT NULL`)).join(" AND ")})
           THEN date_trunc('milliseconds', clock_timestamp())
           ELSE e.completed_at END
     FROM (SELECT completed_at IS NOT NULL AS was_completed FROM subject_erasures WHERE subject_id = $1) before
     WHERE e.subject_id = $1
     RETURNING ${ERASURE_COLUMNS.split(",")
       .map((name) => `e.${name.trim()}`)
       .join(", ")}, before.was_completed`,
    [subjectId],
  );
  const row = updated.rows[0];
  if (!row) return undefined;
  const { was_completed: wasCompleted, ...erasure } = row;
  return { row: erasure, completedNow: !wasCompleted && erasure.completed_at !== null };
}
