import { isUuid, notFound, type Queryable } from "@evalp/kit";

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

/** Checks the whole chain organization → app → environment (404 otherwise). */
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
