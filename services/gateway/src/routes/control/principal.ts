import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { COMMON_ERRORS } from "../schemas.js";

const AuthPrincipal = Type.Object(
  {
    kind: Type.Union([Type.Literal("api_key"), Type.Literal("session"), Type.Literal("legacy")]),
    principal_id: Type.String(),
    scopes: Type.Array(Type.String()),
    api_key_name: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
  },
  { title: "AuthPrincipal" },
);

/** `GET /v1/auth/principal`: who the caller is and what it may do. */
export function principalRoutes(app: FastifyInstance): void {
  app.get(
    "/v1/auth/principal",
    {
      config: { access: { auth: "operator" } },
      schema: {
        tags: ["control"],
        summary: "The authenticated principal",
        response: { 200: AuthPrincipal, 401: COMMON_ERRORS[401] },
      },
    },
    async (request) => {
      const principal = request.access?.principal;
      if (!principal) throw new Error("auth plugin did not run");
      return {
        kind: principal.kind,
        principal_id: principal.principalId,
        scopes: principal.scopes,
        api_key_name: principal.apiKeyName,
        email: principal.email,
      };
    },
  );
}
