import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import { OrganizationBody, organizationJson } from "./wire.js";

/** `POST /v1/organizations` (sessions only; the caller becomes owner) and `GET ORG`. */
export function organizationRoutes(app: Api<"/v1">, deps: RouteDeps): void {
  const organizations = deps.upstreams.organizations;

  route(app, CONTROL, "createOrganization", "POST /organizations", {
    access: { auth: "session", idempotency: "optional", changesPrincipals: "user" },
    body: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 200 }) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(OrganizationBody),
    handler: async ({ request, call }) => {
      const userId = request.access?.principal.userId ?? "";
      const answer = await organizations.createOrganization({ userId, name: request.body.name }, call);
      return organizationJson(answer.organization);
    },
  });

  route(app, CONTROL, "getOrganization", "GET /organizations/:organization_id", {
    access: { auth: "operator", scope: "org:read" },
    response: ref(OrganizationBody),
    handler: async ({ request, call }) => {
      const answer = await organizations.getOrganization(
        { organizationId: request.params.organization_id },
        call,
      );
      return organizationJson(answer.organization);
    },
  });
}
