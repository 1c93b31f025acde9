import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { route } from "../index.js";
import type { ControlApi } from "./index.js";
import { TokenAndPassword } from "./wire.js";

/** A reset is asked for with no credential. */
const REQUESTS = { auth: "none", idempotency: "optional" } as const;

/**
 * A reset is confirmed with its token, not a credential; it hashes the new password and ends
 * every session of the user (whose, the gateway cannot tell).
 */
const CONFIRMS = {
  auth: "none",
  idempotency: "optional",
  changesPrincipals: "all",
  hashesPassword: true,
} as const;

/** #1 `POST /auth/password-reset/request` and `POST /auth/password-reset/confirm`; no credentials. */
export function passwordResetRoutes(app: ControlApi<"/auth">, deps: RouteDeps): void {
  const auth = deps.upstreams.auth;

  route(app, "requestPasswordReset", "POST /password-reset/request", REQUESTS, {
    body: Type.Object(
      { email: Type.String({ minLength: 3, maxLength: 320 }) },
      { additionalProperties: false },
    ),
    answer: Type.Object({ status: Type.Literal("accepted") }, { title: "PasswordResetRequested" }),
    handler: async ({ request, call }) => {
      const { email } = request.body;
      await deps.attempts.check("password-reset", email, request.ip);
      await auth.requestPasswordReset({ email }, call);
      return { status: "accepted" as const };
    },
  });

  route(app, "confirmPasswordReset", "POST /password-reset/confirm", CONFIRMS, {
    body: TokenAndPassword,
    answer: Type.Object({ status: Type.Literal("reset") }, { title: "PasswordResetDone" }),
    handler: async ({ request, call }) => {
      await auth.confirmPasswordReset(request.body, call);
      return { status: "reset" as const };
    },
  });
}
