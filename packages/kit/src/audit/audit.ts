import { z } from "zod";
import type { Config } from "../config/config.js";
import { newId } from "../core/ids.js";
import type { Queryable } from "../db/db.js";
import { type StreamRoute, streamLimits } from "../events/nats.js";
import { writeOutboxMessage } from "../events/outbox/outbox.js";
import type { Actor, RequestContext } from "../rpc/request-context.js";

/** The root of audit subjects, `audit.<organization_id>`. */
export const AUDIT_ROOT = "audit";

/** The route of audit records into the `AUDIT` stream, as configured. */
export function auditRoute(
  config: Pick<
    Config,
    | "AUDIT_STREAM"
    | "AUDIT_SUBJECT_PREFIX"
    | "NATS_STREAM_REPLICAS"
    | "AUDIT_STREAM_MAX_BYTES"
    | "AUDIT_STREAM_MAX_AGE_DAYS"
  >,
): StreamRoute {
  return {
    stream: config.AUDIT_STREAM,
    root: AUDIT_ROOT,
    prefix: config.AUDIT_SUBJECT_PREFIX,
    replicas: config.NATS_STREAM_REPLICAS,
    ...streamLimits(config.AUDIT_STREAM_MAX_BYTES, config.AUDIT_STREAM_MAX_AGE_DAYS),
  };
}

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

/** An audit event as it is stored and listed (interface AuditEvent), and as it travels. */
export type AuditRecord = {
  id: string;
  organization_id: string;
  app_id: string | null;
  environment_id: string | null;
  actor_kind: string;
  actor_id: string;
  action: string;
  resource_type: string;
  resource_id: string;
  request_id: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
};

const uuid = z.uuid();
const text = (max: number) => z.string().min(1).max(max);
const auditRecordSchema = z.strictObject({
  id: uuid,
  organization_id: uuid,
  app_id: uuid.nullable(),
  environment_id: uuid.nullable(),
  actor_kind: text(64),
  actor_id: text(256),
  action: text(128),
  resource_type: text(128),
  resource_id: text(256),
  request_id: z.string().max(256).nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.iso.datetime({ offset: true }),
});

/**
 * An audit record as it arrived from another plane, or null when it is none: what comes over
 * NATS is checked like any input (a publisher with a bug, or one that should not publish).
 */
export function parseAuditRecord(value: unknown): AuditRecord | null {
  const parsed = auditRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The record of an entry made in the request described by `context`. */
export function auditRecord(context: RequestContext, entry: AuditEntry): AuditRecord {
  const actor = entry.actor ?? context.actor ?? { kind: "system", id: "system" };
  return {
    id: newId(),
    organization_id: entry.organizationId,
    app_id: entry.appId ?? null,
    environment_id: entry.environmentId ?? null,
    actor_kind: actor.kind,
    actor_id: actor.id,
    action: entry.action,
    resource_type: entry.resourceType,
    resource_id: entry.resourceId,
    request_id: context.requestId,
    metadata: entry.metadata ?? {},
    created_at: new Date().toISOString(),
  };
}

/**
 * Audits a mutation of a plane other than control. The audit trail lives in the control schema,
 * which no other plane may write; so the record goes into the plane's own outbox in the
 * transaction of the change (it exists exactly when the change does), and the relay carries it
 * to control, which stores it once (by id).
 */
export async function writeAuditRecord(
  db: Queryable,
  context: RequestContext,
  entry: AuditEntry,
): Promise<void> {
  const record = auditRecord(context, entry);
  await writeOutboxMessage(db, {
    id: record.id,
    type: "audit",
    subject: `${AUDIT_ROOT}.${record.organization_id}`,
    environmentId: record.environment_id,
    payload: record,
    createdAt: record.created_at,
  });
}
