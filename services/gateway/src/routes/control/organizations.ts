import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { reads, route } from "../index.js";
import { Name, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import { OrganizationBody, organizationJson } from "./wire.js";

/**
 * A new organization is a session's: every credential of its user reaches one more, so what was
 * cached of them goes.
 */
const FOUNDS = { auth: "session", idempotency: "optional", changesPrincipals: "user" } as const;

/** `POST /v1/organizations` (sessions only; the caller becomes owner) and `GET ORG`. */
export function organizationRoutes(app: ControlApi<"/v1">, deps: RouteDeps): void {
  const organizations = deps.upstreams.organizations;

  route(app, "createOrganization", "POST /organizations", FOUNDS, {
    body: Type.Object({ name: Name }, { additionalProperties: false }),
    answer: ref(OrganizationBody),
    rpc: ({ access, body }, call) =>
      organizations.createOrganization({ userId: access?.principal.userId ?? "", name: body.name }, call),
    json: (answer) => organizationJson(answer.organization),
  });

  route(app, "getOrganization", "GET /organizations/:organization_id", reads("org:read"), {
    answer: ref(OrganizationBody),
    rpc: ({ params }, call) =>
      organizations.getOrganization({ organizationId: params.organization_id }, call),
    json: (answer) => organizationJson(answer.organization),
  });
}
