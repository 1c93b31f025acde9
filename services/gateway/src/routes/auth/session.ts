import { AppError } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply } from "fastify";
import { callOptions } from "../../http/call.js";
import { iso } from "../../http/timestamps.js";
import { SESSION_COOKIE } from "../../plugins/auth.js";
import type { RouteDeps } from "../deps.js";
import { COMMON_ERRORS, DateTime, ErrorBody, OptionalIdempotencyHeaders, Uuid } from "../schemas.js";

const Email = Type.String({ format: "email", maxLength: 320 });
const tags = ["auth"];

const SignupBody = Type.Object(
  {
    email: Email,
    password: Type.String({ minLength: 8, maxLength: 256 }),
    organization_name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);
const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

/** The session cookie carries the access token itself (contract §3). */
function setSessionCookie(reply: FastifyReply, token: string, expiresAt: Date, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "lax",
    secure,
    path: "/",
    expires: expiresAt,
  });
}

/** `/auth/signup`, `/auth/login` and `/auth/logout`: the only routes that create or end sessions. */
export function sessionRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const secureCookie = deps.config.NODE_ENV !== "development";

  app.post(
    "/auth/signup",
    {
      config: { access: { auth: "none", idempotency: "optional", hashesPassword: true } },
      schema: {
        tags,
        summary: "Sign up: a user, their organization and a first access token",
        body: SignupBody,
        headers: OptionalIdempotencyHeaders,
        response: {
          201: Type.Object({
            user_id: Uuid,
            organization_id: Uuid,
            access_token: Type.String(),
            expires_at: DateTime,
          }),
          409: ErrorBody,
          422: COMMON_ERRORS[422],
        },
      },
    },
    async (request, reply) => {
      if (!deps.config.SIGNUP_ENABLED)
        throw new AppError("not_found", "Sign-up is disabled.", { resource: "route" });
      const body = request.body as { email: string; password: string; organization_name: string };
      const answer = await deps.upstreams.auth.signup(
        { email: body.email, password: body.password, organizationName: body.organization_name },
        callOptions(request),
      );
      const expiresAt = iso(answer.expiresAt);
      setSessionCookie(reply, answer.accessToken, new Date(expiresAt), secureCookie);
      return reply.code(201).send({
        user_id: answer.userId,
        organization_id: answer.organizationId,
        access_token: answer.accessToken,
        expires_at: expiresAt,
      });
    },
  );

  app.post(
    "/auth/login",
    {
      config: { access: { auth: "none", idempotency: "optional" } },
      schema: {
        tags,
        summary: "Log in with email and password",
        body: LoginBody,
        headers: OptionalIdempotencyHeaders,
        response: {
          200: Type.Object({
            access_token: Type.String(),
            token_type: Type.Literal("bearer"),
            expires_at: DateTime,
          }),
          401: ErrorBody,
          422: COMMON_ERRORS[422],
        },
      },
    },
    async (request, reply) => {
      const body = request.body as { email: string; password: string };
      await deps.attempts.check("login", body.email, request.ip);
      const answer = await deps.upstreams.auth.login(body, callOptions(request));
      const expiresAt = iso(answer.expiresAt);
      setSessionCookie(reply, answer.accessToken, new Date(expiresAt), secureCookie);
      return reply.send({ access_token: answer.accessToken, token_type: "bearer", expires_at: expiresAt });
    },
  );

  app.post(
    "/auth/logout",
    {
      config: { access: { auth: "session", idempotency: "optional", changesPrincipals: "credential" } },
      schema: {
        tags,
        summary: "Revoke the presented access token (bearer or cookie)",
        headers: OptionalIdempotencyHeaders,
        response: { 204: Type.Null(), 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (request, reply) => {
      await deps.upstreams.auth.logout({ accessToken: request.credential ?? "" }, callOptions(request));
      reply.clearCookie(SESSION_COOKIE, { path: "/", httpOnly: true, sameSite: "lax", secure: secureCookie });
      return reply.code(204).send();
    },
  );
}
