import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isUuid, notFound, pageResult } from "@evalp/kit";
import {
  AuditEventSchema,
  type ListAuditEventsRequest,
  type ListAuditEventsResponse,
  ListAuditEventsResponseSchema,
} from "@evalp/proto/control/v1/audit";
import { listAuditRows } from "../db/audit.js";
import type { Deps } from "../deps.js";

/** The organization's audit trail, newest first, optionally filtered by action and resource type. */
export function listAuditEvents(deps: Deps) {
  return async (req: ListAuditEventsRequest): Promise<ListAuditEventsResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const found = await listAuditRows(
      deps.pool,
      req.organizationId,
      { action: req.action ?? null, resourceType: req.resourceType ?? null },
      req.page,
    );
    const { rows, info } = pageResult(found, req.page);
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
