import { type Queryable, writeOutboxEvent } from "@evalp/kit";

/**
 * Emits an organization-level event (membership, invitation) into every environment of the
 * organization: events are delivered per environment (docs/webhooks.md), and each environment's
 * webhook subscribers should hear about changes to who can act in it.
 */
export async function emitToOrganization(
  db: Queryable,
  organizationId: string,
  type: string,
  data: Record<string, unknown>,
): Promise<void> {
  const environments = await db.query<{ id: string }>(
    `SELECT e.id FROM environments e JOIN apps a ON a.id = e.app_id WHERE a.organization_id = $1
     ORDER BY e.created_at, e.id`,
    [organizationId],
  );
  for (const environment of environments.rows) {
    await writeOutboxEvent(db, { type, environmentId: environment.id, data });
  }
}
