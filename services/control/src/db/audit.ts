import { type Actor, newId, type Queryable, type RequestContext } from "@evalp/kit";

/** What happened, to what, where: one audit event (interface AuditEvent). */
export type AuditEntry = {
  organizationId: string;
  appId?: string | null;
  environmentId?: string | null;
  action: string;
  resourceType: string;
  resourceId: string;
  /** Never a secret: names and counts, not tokens or keys. */
  metadata?: Record<string, unknown>;
  /** Who acted, when the request carried no operator principal (an invitee, say). */
  actor?: Actor;
};

/** Writes an audit event; call it with the client of the transaction that makes the change. */
export async function writeAudit(db: Queryable, context: RequestContext, entry: AuditEntry): Promise<void> {
  const actor = entry.actor ?? context.actor ?? { kind: "system", id: "system" };
  await db.query(
    `INSERT INTO audit_events (id, organization_id, app_id, environment_id, actor_kind, actor_id, action,
       resource_type, resource_id, request_id, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      newId(),
      entry.organizationId,
      entry.appId ?? null,
      entry.environmentId ?? null,
      actor.kind,
      actor.id,
      entry.action,
      entry.resourceType,
      entry.resourceId,
      context.requestId,
      entry.metadata ?? {},
    ],
  );
}
