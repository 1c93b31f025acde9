import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { OrgParams, ref } from "../schemas.js";
import { OrganizationBody, organizationJson } from "./wire.js";

const TAG = "control";

/** `POST /v1/organizations` (sessions only; the caller becomes owner) and `GET ORG`. */
export function organizationRoutes(app: Api, deps: RouteDeps): void {
  const organizations = deps.upstreams.organizations;

  route(app, TAG, {
    method: "POST",
    url: "/organizations",
    operationId: "createOrganization",
    summary: "Create an organization",
    description:
      "Creates an organization whose owner is the calling user. Sessions only: an API key gets " +
      "403. An Idempotency-Key is honoured when sent.",
    access: { auth: "session", idempotency: "optional", changesPrincipals: "user" },
    body: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 200 }) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(OrganizationBody),
    responseDescription: "The organization, created.",
    handler: async ({ request, call }) => {
      const userId = request.access?.principal.userId ?? "";
      const answer = await organizations.createOrganization({ userId, name: request.body.name }, call);
      return organizationJson(answer.organization);
    },
  });

  route(app, TAG, {
    method: "GET",
    url: "/organizations/:organization_id",
    operationId: "getOrganization",
    summary: "Get an organization",
    description: "One organization the caller reaches. Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: OrgParams,
    response: ref(OrganizationBody),
    responseDescription: "The organization.",
    handler: async ({ request, call }) => {
      const answer = await organizations.getOrganization(
        { organizationId: request.params.organization_id },
        call,
      );
      return organizationJson(answer.organization);
    },
  });
}
