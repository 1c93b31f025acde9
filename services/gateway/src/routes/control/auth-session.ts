import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import { iso } from "../../http/timestamps.js";
import { SESSION_COOKIE } from "../../plugins/auth.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { ref } from "../schemas.js";
import { AccessToken, accessTokenJson, Password, SignupResult, signupJson } from "./wire.js";

const TAG = "auth";

/** `/auth/signup`, `/auth/login` and `/auth/logout`: the only routes that create or end sessions. */
export function authSessionRoutes(app: Api, deps: RouteDeps): void {
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

  route(app, TAG, {
    method: "POST",
    url: "/signup",
    operationId: "signUp",
    summary: "Sign up",
    description:
      "Creates a user, their organization (the user is its owner) and a first access token, " +
      "which is also set as the session cookie. An email already taken: 409 `already_exists`. " +
      "404 when sign-up is turned off. Needs no credential; an Idempotency-Key is honoured when sent.",
    access: { auth: "none", idempotency: "optional", hashesPassword: true },
    body: Type.Object(
      {
        email: Type.String({ format: "email", maxLength: 320 }),
        password: Password,
        organization_name: Type.String({ minLength: 1, maxLength: 200 }),
      },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(SignupResult),
    responseDescription: "The user and organization, created, and an access token.",
    errors: [409],
    handler: async ({ request, reply, call }) => {
      if (!deps.config.SIGNUP_ENABLED)
        throw new AppError("not_found", "Sign-up is disabled.", { resource: "route" });
      const { email, password, organization_name } = request.body;
      const answer = await auth.signup({ email, password, organizationName: organization_name }, call);
      return signupJson(answer, startSession(reply, answer));
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/login",
    operationId: "logIn",
    summary: "Log in",
    description:
      "Exchanges an email and password for an access token (12 h), also set as the session " +
      "cookie. A wrong email or password: 401 `invalid_credentials`. Attempts are limited per " +
      "email and per client address (429). Needs no credential; an Idempotency-Key is honoured when sent.",
    access: { auth: "none", idempotency: "optional" },
    body: Type.Object(
      {
        email: Type.String({ minLength: 1, maxLength: 320 }),
        password: Type.String({ minLength: 1, maxLength: 256 }),
      },
      { additionalProperties: false },
    ),
    response: ref(AccessToken),
    responseDescription: "A new session's access token.",
    errors: [401],
    handler: async ({ request, reply, call }) => {
      await deps.attempts.check("login", request.body.email, request.ip);
      const answer = await auth.login(request.body, call);
      return accessTokenJson(answer, startSession(reply, answer));
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/logout",
    operationId: "logOut",
    summary: "Log out",
    description:
      "Revokes the access token presented (bearer or cookie) and clears the cookie. Sessions " +
      "only: an API key gets 403. An Idempotency-Key is honoured when sent.",
    access: { auth: "session", idempotency: "optional", changesPrincipals: "credential" },
    status: 204,
    responseDescription: "The session has ended.",
    handler: async ({ request, reply, call }) => {
      await auth.logout({ accessToken: request.credential ?? "" }, call);
      reply.clearCookie(SESSION_COOKIE, cookie);
      return undefined;
    },
  });
}
