import { isUuid, notFound, QUOTA_LOCK_SQL, type Queryable, quotaLockKey } from "@evalp/kit";

/**
 * Checks that an app belongs to the organization. Every app-level RPC calls it first, so a
 * path that mixes organizations answers 404 whatever exists.
 */
export async function requireApp(db: Queryable, organizationId: string, appId: string): Promise<void> {
  if (!isUuid(organizationId) || !isUuid(appId)) throw notFound("app");
  const found = await db.query("SELECT 1 FROM apps WHERE id = $1 AND organization_id = $2", [
    appId,
    organizationId,
  ]);
  if (found.rowCount === 0) throw notFound("app");
}

/** Checks the whole chain organization → app → environment. */
export async function requireEnvironment(
  db: Queryable,
  ref: { organizationId: string; appId: string; environmentId: string } | undefined,
): Promise<void> {
  if (!ref || !isUuid(ref.organizationId) || !isUuid(ref.appId) || !isUuid(ref.environmentId)) {
    throw notFound("environment");
  }
  const found = await db.query(
    `SELECT 1 FROM environments e JOIN apps a ON a.id = e.app_id
     WHERE e.id = $1 AND a.id = $2 AND a.organization_id = $3`,
    [ref.environmentId, ref.appId, ref.organizationId],
  );
  if (found.rowCount === 0) throw notFound("environment");
}

/**
 * `requireEnvironment` and the `active_subjects` quota lock (`lockQuotaCounter`) in one round
 * trip: imports are the busiest writes, and each statement of theirs runs under that lock.
 */
export async function lockEnvironmentSubjects(
  db: Queryable,
  ref: { organizationId: string; appId: string; environmentId: string } | undefined,
): Promise<void> {
  if (!ref || !isUuid(ref.organizationId) || !isUuid(ref.appId) || !isUuid(ref.environmentId)) {
    throw notFound("environment");
  }
  const found = await db.query(
    `SELECT ${QUOTA_LOCK_SQL} FROM environments e JOIN apps a ON a.id = e.app_id
     WHERE e.id = $2 AND a.id = $3 AND a.organization_id = $4`,
    [quotaLockKey(ref.environmentId, "active_subjects"), ref.environmentId, ref.appId, ref.organizationId],
  );
  if (found.rowCount === 0) throw notFound("environment");
}
