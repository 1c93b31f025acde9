import type { AuditEvent } from "@evalp/proto/control/v1/audit";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { iso } from "../../http/timestamps.js";
import type { RouteDeps } from "../deps.js";
import { COMMON_ERRORS, DateTime, OrgParams, Page, PageQuery, Uuid } from "../schemas.js";

const AuditEventBody = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    app_id: Type.Union([Uuid, Type.Null()]),
    environment_id: Type.Union([Uuid, Type.Null()]),
    actor_kind: Type.String(),
    actor_id: Type.String(),
    action: Type.String(),
    resource_type: Type.String(),
    resource_id: Type.String(),
    request_id: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    created_at: DateTime,
  },
  { title: "AuditEvent" },
);

function auditJson(event: AuditEvent) {
  return {
    id: event.id,
    organization_id: event.organizationId,
    app_id: event.appId ?? null,
    environment_id: event.environmentId ?? null,
    actor_kind: event.actorKind,
    actor_id: event.actorId,
    action: event.action,
    resource_type: event.resourceType,
    resource_id: event.resourceId,
    request_id: event.requestId ?? null,
    metadata: event.metadata ?? {},
    created_at: iso(event.createdAt),
  };
}

const AuditQuery = Type.Composite([
  PageQuery,
  Type.Object({
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  }),
]);

/** `GET ORG/audit-events` (AuditEventPage), filtered by `action` and `resource_type`. */
export function auditRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    "/v1/organizations/:organization_id/audit-events",
    {
      config: { access: { auth: "operator", scope: "audit:read" } },
      schema: {
        tags: ["control"],
        summary: "The organization's audit trail, newest first",
        params: OrgParams,
        querystring: AuditQuery,
        response: { 200: Page(AuditEventBody, "AuditEventPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const { organization_id } = request.params as { organization_id: string };
      const query = request.query as {
        limit?: number;
        cursor?: string;
        action?: string;
        resource_type?: string;
      };
      const page = pageRequest(request, deps.cursors, query);
      const answer = await deps.upstreams.audit.listAuditEvents(
        { organizationId: organization_id, page, action: query.action, resourceType: query.resource_type },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(auditJson), answer.page);
    },
  );
}
