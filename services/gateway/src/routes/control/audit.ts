import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { reads, route } from "../index.js";
import { pageOfItems, pageQuery } from "../wire.js";
import type { ControlApi } from "./index.js";
import { AuditEventBody, auditEventJson, type ORG_PREFIX, organizationRef } from "./wire.js";

/** An audit list's filters: one action, one kind of resource. */
const AuditFilters = {
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
};

/** `GET ORG/audit-events` (AuditEventPage), filtered by `action` and `resource_type`. */
export function auditRoutes(app: ControlApi<typeof ORG_PREFIX>, deps: RouteDeps): void {
  const audit = deps.upstreams.audit;

  route(app, "listAuditEvents", "GET /audit-events", reads("audit:read"), {
    query: pageQuery(AuditFilters),
    answer: pageOfItems(AuditEventBody),
    list: ({ params, query }, page, call) =>
      audit.listAuditEvents(
        {
          ...organizationRef(params),
          page,
          action: query.action,
          resourceType: query.resource_type,
        },
        call,
      ),
    item: auditEventJson,
  });
}
