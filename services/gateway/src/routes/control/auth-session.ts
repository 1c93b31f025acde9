import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import { SESSION_COOKIE } from "../../admission/credentials.js";
import { iso } from "../../http/timestamps.js";
import type { RouteDeps } from "../deps.js";
import { route } from "../index.js";
import { Name, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import { AccessToken, accessTokenJson, Password, SignupResult, sessionRef, signupJson } from "./wire.js";

/** Sign-up needs no credential, and hashes a password (counted per client address). */
const SIGN_UP = { auth: "none", idempotency: "optional", hashesPassword: true } as const;

/** Log-in needs no credential (its attempts are limited per email and per client address). */
const LOG_IN = { auth: "none", idempotency: "optional" } as const;

/** Log-out is a session's (an API key is 403), and what was cached of its credential goes. */
const LOG_OUT = { auth: "session", idempotency: "optional", changesPrincipals: "credential" } as const;

/** `/auth/signup`, `/auth/login` and `/auth/logout`: the only routes that create or end sessions. */
export function authSessionRoutes(app: ControlApi<"/auth">, deps: RouteDeps): void {
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

  route(app, "signUp", "POST /signup", SIGN_UP, {
    body: Type.Object(
      {
        email: Type.String({ format: "email", maxLength: 320 }),
        password: Password,
        organization_name: Name,
      },
      { additionalProperties: false },
    ),
    answer: ref(SignupResult),
    handler: async ({ request, reply, call }) => {
      if (!deps.config.SIGNUP_ENABLED)
        throw new AppError("not_found", "Sign-up is disabled.", { resource: "route" });
      const { email, password, organization_name } = request.body;
      const answer = await auth.signup({ email, password, organizationName: organization_name }, call);
      return signupJson(answer, startSession(reply, answer));
    },
  });

  route(app, "logIn", "POST /login", LOG_IN, {
    body: Type.Object(
      {
        email: Type.String({ minLength: 1, maxLength: 320 }),
        password: Type.String({ minLength: 1, maxLength: 256 }),
      },
      { additionalProperties: false },
    ),
    answer: ref(AccessToken),
    handler: async ({ request, reply, call }) => {
      await deps.attempts.check("login", request.body.email, request.ip);
      const answer = await auth.login(request.body, call);
      return accessTokenJson(answer, startSession(reply, answer));
    },
  });

  route(app, "logOut", "POST /logout", LOG_OUT, {
    handler: async ({ request, reply, call }) => {
      await auth.logout(sessionRef(request), call);
      reply.clearCookie(SESSION_COOKIE, cookie);
      return undefined;
    },
  });
}
