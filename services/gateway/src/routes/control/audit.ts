import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { Page, PageQuery } from "../schemas.js";
import { type ORG_PREFIX, organizationRef } from "./organization.js";
import { CONTROL } from "./plane.js";
import { AuditEventBody, auditEventJson } from "./wire.js";

const AuditQuery = Type.Composite([
  PageQuery,
  Type.Object({
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  }),
]);

/** `GET ORG/audit-events` (AuditEventPage), filtered by `action` and `resource_type`. */
export function auditRoutes(app: Api<typeof ORG_PREFIX>, deps: RouteDeps): void {
  route(app, CONTROL, "listAuditEvents", "GET /audit-events", {
    access: { auth: "operator", scope: "audit:read" },
    querystring: AuditQuery,
    response: Page(AuditEventBody, "AuditEventPage"),
    handler: ({ request, call }) => {
      const { action, resource_type } = request.query;
      return pageOf(
        request,
        deps.cursors,
        (page) =>
          deps.upstreams.audit.listAuditEvents(
            { ...organizationRef(request.params), page, action, resourceType: resource_type },
            call,
          ),
        auditEventJson,
      );
    },
  });
}
