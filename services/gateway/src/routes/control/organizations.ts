import type { Organization } from "@evalp/proto/control/v1/organization";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { iso } from "../../http/timestamps.js";
import type { RouteDeps } from "../deps.js";
import { COMMON_ERRORS, DateTime, OptionalIdempotencyHeaders, OrgParams, Uuid } from "../schemas.js";

const OrganizationBody = Type.Object(
  { id: Uuid, name: Type.String(), created_at: DateTime },
  { title: "Organization" },
);

function organizationJson(organization: Organization | undefined) {
  if (!organization) throw new Error("upstream returned no organization");
  return { id: organization.id, name: organization.name, created_at: iso(organization.createdAt) };
}

/** `POST /v1/organizations` (sessions only; the caller becomes owner) and `GET ORG`. */
export function organizationRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    "/v1/organizations",
    {
      config: { access: { auth: "session", idempotency: "optional", changesPrincipals: "user" } },
      schema: {
        tags: ["control"],
        summary: "Create an organization",
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
        headers: OptionalIdempotencyHeaders,
        response: { 201: OrganizationBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const body = request.body as { name: string };
      const userId = request.access?.principal.userId ?? "";
      const answer = await deps.upstreams.organizations.createOrganization(
        { userId, name: body.name },
        callOptions(request),
      );
      return reply.code(201).send(organizationJson(answer.organization));
    },
  );

  app.get(
    "/v1/organizations/:organization_id",
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "Get an organization",
        params: OrgParams,
        response: { 200: OrganizationBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const { organization_id } = request.params as { organization_id: string };
      const answer = await deps.upstreams.organizations.getOrganization(
        { organizationId: organization_id },
        callOptions(request),
      );
      return organizationJson(answer.organization);
    },
  );
}
