import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isUuid, notFound, pageClause, pageResult } from "@evalp/kit";
import {
  AuditEventSchema,
  type ListAuditEventsRequest,
  type ListAuditEventsResponse,
  ListAuditEventsResponseSchema,
} from "@evalp/proto/control/v1/audit";
import type { Deps } from "../deps.js";

type AuditRow = {
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
  metadata: JsonObject;
  created_at: Date;
};

/** The organization's audit trail, newest first, optionally filtered by action and resource type. */
export function listAuditEvents(deps: Deps) {
  return async (req: ListAuditEventsRequest): Promise<ListAuditEventsResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const page = pageClause(req.page, 4);
    const found = await deps.pool.query<AuditRow>(
      `SELECT id, organization_id, app_id, environment_id, actor_kind, actor_id, action, resource_type,
              resource_id, request_id, metadata, created_at
       FROM audit_events
       WHERE organization_id = $1 AND ($2::text IS NULL OR action = $2) AND ($3::text IS NULL OR resource_type = $3)
         AND ${page.where} ${page.tail}`,
      [req.organizationId, req.action ?? null, req.resourceType ?? null, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListAuditEventsResponseSchema, {
      items: rows.map((row) =>
        create(AuditEventSchema, {
          id: row.id,
          organizationId: row.organization_id,
          appId: row.app_id ?? undefined,
          environmentId: row.environment_id ?? undefined,
          actorKind: row.actor_kind,
          actorId: row.actor_id,
          action: row.action,
          resourceType: row.resource_type,
          resourceId: row.resource_id,
          requestId: row.request_id ?? undefined,
          metadata: row.metadata,
          createdAt: timestampFromDate(row.created_at),
        }),
      ),
      page: info,
    });
  };
}
