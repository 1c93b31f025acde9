import { AppError } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import { iso } from "../../http/timestamps.js";
import { SESSION_COOKIE } from "../../plugins/auth.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { OptionalIdempotencyHeaders, ref } from "../schemas.js";
import { AccessToken, accessTokenJson, Password, SignupResult, signupJson } from "./wire.js";

const TAG = "auth";

/** The session cookie carries the access token itself (contract §3). */
function setSessionCookie(reply: FastifyReply, token: string, expiresAt: string, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "lax",
    secure,
    path: "/",
    expires: new Date(expiresAt),
  });
}

/** `/auth/signup`, `/auth/login` and `/auth/logout`: the only routes that create or end sessions. */
export function authSessionRoutes(app: Api, deps: RouteDeps): void {
  const secureCookie = deps.config.NODE_ENV !== "development";
  const auth = deps.upstreams.auth;

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
    headers: OptionalIdempotencyHeaders,
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
      const expiresAt = iso(answer.expiresAt);
      setSessionCookie(reply, answer.accessToken, expiresAt, secureCookie);
      return signupJson(answer, expiresAt);
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
    headers: OptionalIdempotencyHeaders,
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
      const expiresAt = iso(answer.expiresAt);
      setSessionCookie(reply, answer.accessToken, expiresAt, secureCookie);
      return accessTokenJson(answer, expiresAt);
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
    headers: OptionalIdempotencyHeaders,
    status: 204,
    responseDescription: "The session has ended.",
    handler: async ({ request, reply, call }) => {
      await auth.logout({ accessToken: request.credential ?? "" }, call);
      reply.clearCookie(SESSION_COOKIE, { path: "/", httpOnly: true, sameSite: "lax", secure: secureCookie });
      return undefined;
    },
  });
}
