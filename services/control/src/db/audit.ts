import type { JsonObject } from "@bufbuild/protobuf";
import {
  type AuditEntry,
  type AuditRecord,
  auditRecord,
  pageClause,
  type Queryable,
  type RequestContext,
} from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";

export type { AuditEntry } from "@evalp/kit";

/** The columns an audit record is stored with, and `auditValues` gives them in this order. */
export const AUDIT_COLUMNS = `id, organization_id, app_id, environment_id, actor_kind, actor_id, action,
  resource_type, resource_id, request_id, metadata, created_at`;

/** A record's values, in the order of AUDIT_COLUMNS. */
export function auditValues(record: AuditRecord): unknown[] {
  return [
    record.id,
    record.organization_id,
    record.app_id,
    record.environment_id,
    record.actor_kind,
    record.actor_id,
    record.action,
    record.resource_type,
    record.resource_id,
    record.request_id,
    record.metadata,
    record.created_at,
  ];
}

/** Stores one audit record; a record already stored (same id) is left as it is. */
export async function insertAuditRecord(db: Queryable, record: AuditRecord): Promise<void> {
  await db.query(
    `INSERT INTO audit_events (${AUDIT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (id) DO NOTHING`,
    auditValues(record),
  );
}

/** Writes an audit event of a control-plane change; call it with the change's transaction client. */
export async function writeAudit(db: Queryable, context: RequestContext, entry: AuditEntry): Promise<void> {
  await insertAuditRecord(db, auditRecord(context, entry));
}

/** An audit event as listed: the record as kit writes it, read back from its columns. */
export type AuditRow = Omit<AuditRecord, "metadata" | "created_at"> & {
  metadata: JsonObject;
  created_at: Date;
};

/** A page of an organization's audit events, newest first, of one action and resource type when given. */
export async function listAuditRows(
  db: Queryable,
  organizationId: string,
  filter: { action: string | null; resourceType: string | null },
  page: PageRequest | undefined,
): Promise<AuditRow[]> {
  const clause = pageClause(page, 4);
  const found = await db.query<AuditRow>(
    `SELECT id, organization_id, app_id, environment_id, actor_kind, actor_id, action, resource_type,
            resource_id, request_id, metadata, created_at
     FROM audit_events
     WHERE organization_id = $1 AND ($2::text IS NULL OR action = $2) AND ($3::text IS NULL OR resource_type = $3)
       AND ${clause.where} ${clause.tail}`,
    [organizationId, filter.action, filter.resourceType, ...clause.params],
  );
  return found.rows;
}
