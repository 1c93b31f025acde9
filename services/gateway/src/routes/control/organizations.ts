import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { Name, ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import { OrganizationBody, organizationJson } from "./wire.js";

/** `POST /v1/organizations` (sessions only; the caller becomes owner) and `GET ORG`. */
export function organizationRoutes(app: Api<"/v1">, deps: RouteDeps): void {
  const { read } = resources(app, CONTROL, deps.cursors);
  const organizations = deps.upstreams.organizations;

  route(app, CONTROL, "createOrganization", "POST /organizations", {
    access: { auth: "session", idempotency: "optional", changesPrincipals: "user" },
    body: Type.Object({ name: Name }, { additionalProperties: false }),
    status: 201,
    response: ref(OrganizationBody),
    rpc: ({ access, body }, call) =>
      organizations.createOrganization({ userId: access?.principal.userId ?? "", name: body.name }, call),
    json: (answer) => organizationJson(answer.organization),
  });

  read("getOrganization", "GET /organizations/:organization_id", "org:read", OrganizationBody, {
    rpc: ({ params }, call) =>
      organizations.getOrganization({ organizationId: params.organization_id }, call),
    json: (answer) => organizationJson(answer.organization),
  });
}
