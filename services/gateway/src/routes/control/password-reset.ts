import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../index.js";
import { AUTH } from "./index.js";
import { TokenAndPassword } from "./wire.js";

/** #1 `POST /auth/password-reset/request` and `POST /auth/password-reset/confirm`; no credentials. */
export function passwordResetRoutes(app: Api<"/auth">, deps: RouteDeps): void {
  const auth = deps.upstreams.auth;

  route(app, AUTH, {
    id: "requestPasswordReset",
    method: "POST",
    path: "/password-reset/request",
    access: { auth: "none", idempotency: "optional" },
    body: Type.Object(
      { email: Type.String({ minLength: 3, maxLength: 320 }) },
      { additionalProperties: false },
    ),
    status: 202,
    answer: Type.Object({ status: Type.Literal("accepted") }, { title: "PasswordResetRequested" }),
    handler: async ({ request, call }) => {
      const { email } = request.body;
      await deps.attempts.check("password-reset", email, request.ip);
      await auth.requestPasswordReset({ email }, call);
      return { status: "accepted" as const };
    },
  });

  route(app, AUTH, {
    id: "confirmPasswordReset",
    method: "POST",
    path: "/password-reset/confirm",
    access: { auth: "none", idempotency: "optional", changesPrincipals: "all", hashesPassword: true },
    body: TokenAndPassword,
    answer: Type.Object({ status: Type.Literal("reset") }, { title: "PasswordResetDone" }),
    errors: [410],
    handler: async ({ request, call }) => {
      await auth.confirmPasswordReset(request.body, call);
      return { status: "reset" as const };
    },
  });
}
