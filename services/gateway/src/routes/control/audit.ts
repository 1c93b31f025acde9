import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { resources } from "../resource.js";
import type { Api } from "../route.js";
import { CONTROL } from "./plane.js";
import { type ORG_PREFIX, organizationRef } from "./requests.js";
import { AuditEventBody, auditEventJson } from "./wire.js";

/** An audit list's filters: one action, one kind of resource. */
const AuditFilters = {
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
};

/** `GET ORG/audit-events` (AuditEventPage), filtered by `action` and `resource_type`. */
export function auditRoutes(app: Api<typeof ORG_PREFIX>, deps: RouteDeps): void {
  const { filteredList } = resources(app, CONTROL, deps.cursors);
  const audit = deps.upstreams.audit;

  filteredList(
    "listAuditEvents",
    "GET /audit-events",
    "audit:read",
    { item: AuditEventBody, filters: AuditFilters, json: auditEventJson },
    ({ params, query }, page, call) =>
      audit.listAuditEvents(
        { ...organizationRef(params), page, action: query.action, resourceType: query.resource_type },
        call,
      ),
  );
}
