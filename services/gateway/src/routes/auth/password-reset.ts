import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import type { RouteDeps } from "../deps.js";
import { COMMON_ERRORS, ErrorBody, OptionalIdempotencyHeaders } from "../schemas.js";

const tags = ["auth"];

/** #1 `POST /auth/password-reset/request` and `POST /auth/password-reset/confirm`; no credentials. */
export function passwordResetRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    "/auth/password-reset/request",
    {
      config: { access: { auth: "none", idempotency: "optional" } },
      schema: {
        tags,
        summary: "Mail a reset link if the email belongs to an account; always 202",
        body: Type.Object(
          { email: Type.String({ minLength: 3, maxLength: 320 }) },
          { additionalProperties: false },
        ),
        headers: OptionalIdempotencyHeaders,
        response: {
          202: Type.Object({ status: Type.Literal("accepted") }),
          422: COMMON_ERRORS[422],
          429: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { email } = request.body as { email: string };
      await deps.attempts.check("password-reset", email, request.ip);
      await deps.upstreams.auth.requestPasswordReset({ email }, callOptions(request));
      return reply.code(202).send({ status: "accepted" });
    },
  );

  app.post(
    "/auth/password-reset/confirm",
    {
      config: {
        access: { auth: "none", idempotency: "optional", changesPrincipals: "all", hashesPassword: true },
      },
      schema: {
        tags,
        summary: "Set a new password with a reset token; every session of the user is revoked",
        body: Type.Object(
          {
            token: Type.String({ minLength: 1, maxLength: 512 }),
            password: Type.String({ minLength: 8, maxLength: 256 }),
          },
          { additionalProperties: false },
        ),
        headers: OptionalIdempotencyHeaders,
        response: {
          200: Type.Object({ status: Type.Literal("reset") }),
          404: ErrorBody,
          410: ErrorBody,
          422: COMMON_ERRORS[422],
        },
      },
    },
    async (request) => {
      const body = request.body as { token: string; password: string };
      await deps.upstreams.auth.confirmPasswordReset(body, callOptions(request));
      return { status: "reset" };
    },
  );
}
