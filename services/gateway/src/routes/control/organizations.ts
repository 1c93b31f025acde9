import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, reads, route } from "../index.js";
import { Name, ref } from "../wire.js";
import { CONTROL } from "./index.js";
import { OrganizationBody, organizationJson } from "./wire.js";

/** `POST /v1/organizations` (sessions only; the caller becomes owner) and `GET ORG`. */
export function organizationRoutes(app: Api<"/v1">, deps: RouteDeps): void {
  const organizations = deps.upstreams.organizations;

  route(app, CONTROL, {
    id: "createOrganization",
    method: "POST",
    path: "/organizations",
    access: { auth: "session", idempotency: "optional", changesPrincipals: "user" },
    body: Type.Object({ name: Name }, { additionalProperties: false }),
    status: 201,
    answer: ref(OrganizationBody),
    rpc: ({ access, body }, call) =>
      organizations.createOrganization({ userId: access?.principal.userId ?? "", name: body.name }, call),
    json: (answer) => organizationJson(answer.organization),
  });

  route(app, CONTROL, {
    id: "getOrganization",
    method: "GET",
    path: "/organizations/:organization_id",
    access: reads("org:read"),
    answer: ref(OrganizationBody),
    rpc: ({ params }, call) =>
      organizations.getOrganization({ organizationId: params.organization_id }, call),
    json: (answer) => organizationJson(answer.organization),
  });
}
