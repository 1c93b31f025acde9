import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import { SESSION_COOKIE } from "../../admission/credentials.js";
import { iso } from "../../http/timestamps.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../index.js";
import { Name, ref } from "../wire.js";
import { AUTH } from "./index.js";
import { AccessToken, accessTokenJson, Password, SignupResult, sessionRef, signupJson } from "./wire.js";

/** `/auth/signup`, `/auth/login` and `/auth/logout`: the only routes that create or end sessions. */
export function authSessionRoutes(app: Api<"/auth">, deps: RouteDeps): void {
  // Secure unless in development (docs/authentication.md); set and cleared with the same attributes.
  const cookie = {
    httpOnly: true,
    sameSite: "lax",
    secure: deps.config.NODE_ENV !== "development",
    path: "/",
  } as const;
  const auth = deps.upstreams.auth;

  /** The new session's access token is its cookie too (docs/authentication.md); its expiry, for the answer. */
  function startSession(reply: FastifyReply, answer: { accessToken: string; expiresAt?: Timestamp }): string {
    const expiresAt = iso(answer.expiresAt);
    reply.setCookie(SESSION_COOKIE, answer.accessToken, { ...cookie, expires: new Date(expiresAt) });
    return expiresAt;
  }

  route(app, AUTH, {
    id: "signUp",
    method: "POST",
    path: "/signup",
    access: { auth: "none", idempotency: "optional", hashesPassword: true },
    body: Type.Object(
      {
        email: Type.String({ format: "email", maxLength: 320 }),
        password: Password,
        organization_name: Name,
      },
      { additionalProperties: false },
    ),
    status: 201,
    answer: ref(SignupResult),
    errors: [409],
    handler: async ({ request, reply, call }) => {
      if (!deps.config.SIGNUP_ENABLED)
        throw new AppError("not_found", "Sign-up is disabled.", { resource: "route" });
      const { email, password, organization_name } = request.body;
      const answer = await auth.signup({ email, password, organizationName: organization_name }, call);
      return signupJson(answer, startSession(reply, answer));
    },
  });

  route(app, AUTH, {
    id: "logIn",
    method: "POST",
    path: "/login",
    access: { auth: "none", idempotency: "optional" },
    body: Type.Object(
      {
        email: Type.String({ minLength: 1, maxLength: 320 }),
        password: Type.String({ minLength: 1, maxLength: 256 }),
      },
      { additionalProperties: false },
    ),
    answer: ref(AccessToken),
    errors: [401],
    handler: async ({ request, reply, call }) => {
      await deps.attempts.check("login", request.body.email, request.ip);
      const answer = await auth.login(request.body, call);
      return accessTokenJson(answer, startSession(reply, answer));
    },
  });

  route(app, AUTH, {
    id: "logOut",
    method: "POST",
    path: "/logout",
    access: { auth: "session", idempotency: "optional", changesPrincipals: "credential" },
    status: 204,
    handler: async ({ request, reply, call }) => {
      await auth.logout(sessionRef(request), call);
      reply.clearCookie(SESSION_COOKIE, cookie);
      return undefined;
    },
  });
}
