import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { TokenAndPassword } from "./wire.js";

const TAG = "auth";

/** #1 `POST /auth/password-reset/request` and `POST /auth/password-reset/confirm`; no credentials. */
export function passwordResetRoutes(app: Api, deps: RouteDeps): void {
  const auth = deps.upstreams.auth;

  route(app, TAG, {
    method: "POST",
    url: "/password-reset/request",
    operationId: "requestPasswordReset",
    summary: "Request a password reset",
    description:
      "Mails a reset link (valid 1 h) when the email belongs to an account, and answers 202 " +
      "either way, so the answer tells nothing of who has an account. Requests are limited per " +
      "email and per client address (429). Needs no credential; an Idempotency-Key is honoured when sent.",
    access: { auth: "none", idempotency: "optional" },
    body: Type.Object(
      { email: Type.String({ minLength: 3, maxLength: 320 }) },
      { additionalProperties: false },
    ),
    status: 202,
    response: Type.Object({ status: Type.Literal("accepted") }, { title: "PasswordResetRequested" }),
    responseDescription: "The request is taken (whether or not the email is known).",
    handler: async ({ request, call }) => {
      const { email } = request.body;
      await deps.attempts.check("password-reset", email, request.ip);
      await auth.requestPasswordReset({ email }, call);
      return { status: "accepted" as const };
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/password-reset/confirm",
    operationId: "confirmPasswordReset",
    summary: "Set a new password",
    description:
      "Sets a new password with a reset token (single use) and revokes every session of the " +
      "user. An unknown token: 404 `not_found`; one past its life or already used: 410 " +
      "`reset_token_expired`. Needs no credential; an Idempotency-Key is honoured when sent.",
    access: { auth: "none", idempotency: "optional", changesPrincipals: "all", hashesPassword: true },
    body: TokenAndPassword,
    response: Type.Object({ status: Type.Literal("reset") }, { title: "PasswordResetDone" }),
    responseDescription: "The password is set; the user must log in again.",
    errors: [410],
    handler: async ({ request, call }) => {
      await auth.confirmPasswordReset(request.body, call);
      return { status: "reset" as const };
    },
  });
}
