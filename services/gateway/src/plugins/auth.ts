import type { FastifyInstance, FastifyRequest } from "fastify";
import { pathParams } from "../admission/credentials.js";
import type { PrincipalCache, PrincipalChange } from "../admission/principal-cache.js";
import type { RouteAccess } from "../http/principal.js";

/**
 * Authentication as the admission step proved it (admission/credentials.ts), on every route that
 * declares `auth` other than `none`, before the body is even read: a caller who may not call
 * learns nothing more. The caller is set on the request (`access` for an operator, `participant`
 * or `agent`), then its refusal thrown: 401 for no credential or one that proves nothing
 * (participant and connection tokens are verified there and never reach control; on operator
 * routes they are refused as unknown credentials), 404 across organizations, 403 for scope.
 */
export function registerAuth(app: FastifyInstance, deps: { principals: PrincipalCache }): void {
  app.addHook("onRequest", async (request) => {
    const identity = request.admission?.identity;
    if (!identity) return;
    if (identity.kind === "refused") throw identity.refusal;
    if (identity.kind === "participant") request.participant = identity.participant;
    if (identity.kind === "agent") request.agent = identity.agent;
    if (identity.kind === "operator") {
      request.access = identity.access;
      request.credential = identity.credential;
      if (identity.refusal) throw identity.refusal;
    }
  });
  app.addHook("onSend", async (request, reply) => {
    // Before the client hears of its change, no gateway may still use what it changed. A 4xx is
    // a change refused (nothing changed); a 5xx may have been made before it failed (a timeout
    // after control committed), so it is forgotten like a success.
    const changes = request.routeOptions.config.access?.changesPrincipals;
    if (changes && (reply.statusCode < 400 || reply.statusCode >= 500)) {
      const change = principalChange(changes, request);
      if (change) await deps.principals.forget(change);
    }
  });
}

/** What a change-making request touched, as its route declares; undefined when it names no one. */
function principalChange(
  changes: NonNullable<RouteAccess["changesPrincipals"]>,
  request: FastifyRequest,
): PrincipalChange | undefined {
  if (changes === "all") return { all: true };
  if (changes === "credential") return request.credential ? { credential: request.credential } : undefined;
  if (changes === "user") {
    const userId = request.access?.principal.userId;
    return userId ? { userId } : undefined;
  }
  const id = pathParams(request)[changes.param];
  return id ? { principalId: id } : undefined;
}
