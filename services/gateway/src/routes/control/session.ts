import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import type { RouteDeps } from "../deps.js";
import { COMMON_ERRORS, OptionalIdempotencyHeaders } from "../schemas.js";

const ActiveOrganization = Type.Object({ organization_id: Type.String() }, { title: "ActiveOrganization" });

/** `GET/PUT /v1/session/active-organization`: which organization a session acts in (sessions only). */
export function activeOrganizationRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    "/v1/session/active-organization",
    {
      config: { access: { auth: "session" } },
      schema: {
        tags: ["control"],
        summary: "The session's active organization",
        response: { 200: ActiveOrganization, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const answer = await deps.upstreams.auth.getActiveOrganization(
        { accessToken: request.credential ?? "" },
        callOptions(request),
      );
      return { organization_id: answer.organizationId };
    },
  );

  app.put(
    "/v1/session/active-organization",
    {
      // The session's scopes are its role in the active organization: what it had cached goes.
      config: { access: { auth: "session", idempotency: "optional", changesPrincipals: "credential" } },
      schema: {
        tags: ["control"],
        summary: "Switch the session to another organization the user belongs to",
        headers: OptionalIdempotencyHeaders,
        body: Type.Object(
          { organization_id: Type.String({ format: "uuid" }) },
          { additionalProperties: false },
        ),
        response: { 200: ActiveOrganization, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const { organization_id } = request.body as { organization_id: string };
      const answer = await deps.upstreams.auth.setActiveOrganization(
        { accessToken: request.credential ?? "", organizationId: organization_id },
        callOptions(request),
      );
      return { organization_id: answer.organizationId };
    },
  );
}
