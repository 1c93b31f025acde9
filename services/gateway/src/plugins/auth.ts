import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  AppError,
  grants,
  isRole,
  isUuid,
  looksLikeJwt,
  notFound,
  ROLE_SCOPES,
  type Scope,
  verifyParticipantToken,
} from "@evalp/kit";
import { PrincipalKind as WireKind, type Principal as WirePrincipal } from "@evalp/proto/control/v1/auth";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { PrincipalCache, PrincipalChange } from "../admission/principal-cache.js";
import { callOptions } from "../http/call.js";
import type { Access, Principal, PrincipalKind, RouteAccess } from "../http/principal.js";
import type { Upstreams } from "../upstream.js";

/** The session cookie (docs/authentication.md). */
export const SESSION_COOKIE = "evp_session";

const KINDS: Record<WireKind, PrincipalKind | null> = {
  [WireKind.UNSPECIFIED]: null,
  [WireKind.SESSION]: "session",
  [WireKind.API_KEY]: "api_key",
  [WireKind.LEGACY]: "legacy",
};

/** The credential of a request: `Authorization: Bearer`, then `X-API-Key`, then the session cookie. */
export function presentedCredential(request: FastifyRequest): string | null {
  const authorization = request.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? null;
  }
  const apiKey = request.headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey.length > 0) return apiKey;
  return request.cookies[SESSION_COOKIE] ?? null;
}

function toPrincipal(wire: WirePrincipal): Principal {
  const kind = KINDS[wire.kind];
  if (!kind) throw new Error("upstream returned a principal of no kind");
  const isKey = kind !== "session";
  return {
    kind,
    principalId: wire.principalId,
    userId: wire.userId || null,
    email: wire.email ?? null,
    apiKeyName: wire.apiKeyName ?? null,
    keyReach: isKey
      ? { organizationId: wire.organizationId, appId: wire.appId, environmentId: wire.environmentId }
      : null,
    roles: new Map(wire.memberships.map((m) => [m.organizationId, m.role])),
    activeOrganizationId: wire.activeOrganizationId || null,
    scopes: wire.scopes,
    expiresAt: wire.expiresAt ? timestampDate(wire.expiresAt) : null,
  };
}

/** Path parameters that name resources in the organization → app → environment chain. */
const PATH_IDS = [
  ["organization_id", "organization"],
  ["app_id", "app"],
  ["environment_id", "environment"],
] as const;

/**
 * What the principal may do on this path (docs/authentication.md). Another organization is 404 (its
 * existence is never revealed); for a key, another app or environment of its own organization
 * is 403. A session's scopes are its role's in the path's organization.
 */
export function resolveAccess(principal: Principal, params: Record<string, string>): Access {
  const organizationId = params.organization_id;
  if (organizationId === undefined) {
    const own = principal.keyReach?.organizationId ?? principal.activeOrganizationId;
    return { principal, scopes: principal.scopes, organizationId: own };
  }
  for (const [param, resource] of PATH_IDS) {
    const value = params[param];
    if (value !== undefined && !isUuid(value)) throw notFound(resource);
  }
  const reach = principal.keyReach;
  if (reach) {
    if (reach.organizationId !== organizationId) throw notFound("organization");
    const outside =
      (params.app_id !== undefined && params.app_id !== reach.appId) ||
      (params.environment_id !== undefined && params.environment_id !== reach.environmentId);
    if (outside) {
      throw new AppError("forbidden", "This key does not reach that app or environment.", {
        reason: "outside_key_reach",
      });
    }
    return { principal, scopes: principal.scopes, organizationId };
  }
  const role = principal.roles.get(organizationId);
  if (!role || !isRole(role)) throw notFound("organization");
  return { principal, scopes: [...ROLE_SCOPES[role]], organizationId };
}

/** Browsers cannot set headers on a WebSocket: they offer the token as subprotocol `bearer.<token>`. */
export const BEARER_SUBPROTOCOL = "bearer.";

/** The connection token of a realtime upgrade: `Authorization: Bearer`, else the subprotocol. */
function connectionCredential(request: FastifyRequest): string | null {
  const authorization = request.headers.authorization;
  if (authorization) return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? null;
  const offered = request.headers["sec-websocket-protocol"] ?? "";
  const bearer = offered
    .split(",")
    .map((protocol) => protocol.trim())
    .find((protocol) => protocol.startsWith(BEARER_SUBPROTOCOL));
  return bearer ? bearer.slice(BEARER_SUBPROTOCOL.length) : null;
}

/**
 * Authenticates every route that declares `auth` other than `none`, then checks reach and the
 * route's scope, before the body is even read: a caller who may not call learns nothing more.
 * Participant and connection tokens are verified here (signature, `typ`, 401 `token_expired`
 * past `exp`) and never reach control; on operator routes they are refused as unknown credentials.
 */
export function registerAuth(
  app: FastifyInstance,
  deps: {
    upstreams: Upstreams;
    principals: PrincipalCache;
    jwtSecret: string;
    /**
     * The rate limit's count of a proven credential (429 past its limit). `authorized`: the
     * request may do what it asks (its access is known), so its Idempotency-Key may be claimed in
     * the same round trip; false when an auth error is about to be thrown.
     */
    countCredential: (request: FastifyRequest, authorized: boolean) => Promise<void>;
  },
): void {
  const { upstreams, principals, jwtSecret } = deps;
  const proven = (request: FastifyRequest, credential: string, authorized = true) => {
    request.provenCredential = credential;
    return deps.countCredential(request, authorized);
  };
  app.addHook("onRequest", async (request) => {
    const declared = request.routeOptions.config.access;
    if (!declared || declared.auth === "none") return;
    if (declared.auth === "participant" || declared.auth === "connection") {
      const token =
        declared.auth === "participant" ? presentedCredential(request) : connectionCredential(request);
      if (!token) throw new AppError("unauthenticated", "Authentication required.");
      request.participant = await verifyParticipantToken(jwtSecret, declared.auth, token);
      await proven(request, token);
      return;
    }
    if (declared.auth === "agent") {
      // docs/interview.md#the-agent-protocol: an agent token opens only `/v1/agent/*` (header, or the socket's subprotocol).
      const token = connectionCredential(request);
      if (!token) throw new AppError("unauthenticated", "Authentication required.");
      request.agent = await verifyParticipantToken(jwtSecret, "agent", token);
      await proven(request, token);
      return;
    }
    const credential = presentedCredential(request);
    if (!credential) throw new AppError("unauthenticated", "Authentication required.");
    if (looksLikeJwt(credential)) {
      // A participant or connection token is no operator credential (docs/authentication.md).
      throw new AppError("unauthenticated", "This token is accepted only under /v1/participant/.");
    }
    // The principal the rate limit found cached (`principalAtOnce`), else the cache's or control's.
    const principal =
      request.principalAtOnce ??
      (await principals.lookup(credential, async () => {
        const { principal: wire } = await upstreams.auth.authenticate({ credential }, callOptions(request));
        if (!wire) throw new Error("upstream returned no principal");
        return toPrincipal(wire);
      }));
    request.principalAtOnce = undefined;
    request.credential = credential;
    // What the principal may do here is decided before the count, and its refusal thrown after
    // it: a rate limit's 429 still comes first, and only an authorized request claims its key.
    let refusal: AppError | undefined;
    try {
      authorize(request, principal, declared);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      refusal = error;
    }
    await proven(request, credential, refusal === undefined);
    if (refusal) throw refusal;
  });
  app.addHook("onSend", async (request, reply) => {
    // Before the client hears of its change, no gateway may still use what it changed. A 4xx is
    // a change refused (nothing changed); a 5xx may have been made before it failed (a timeout
    // after control committed), so it is forgotten like a success.
    const changes = request.routeOptions.config.access?.changesPrincipals;
    if (changes && (reply.statusCode < 400 || reply.statusCode >= 500)) {
      const change = principalChange(changes, request);
      if (change) await principals.forget(change);
    }
  });
}

/**
 * What an operator principal may do on a route, as `request.access` (set once known, so that a
 * refusal for scope is still logged and answered as the principal's), or the refusal: 404 across
 * organizations, then 403 for a key on a session's route or a missing scope.
 */
function authorize(request: FastifyRequest, principal: Principal, declared: RouteAccess): void {
  // Reach first: another organization is 404 for every credential, on a session-only route too
  // (`POST ORG/memberships`), so that no answer depends on whether the organization exists.
  const access = resolveAccess(principal, pathParams(request));
  request.access = access;
  if (declared.auth === "session" && principal.kind !== "session") {
    throw new AppError("forbidden", "This endpoint takes a user session, not an API key.", {
      reason: "session_required",
    });
  }
  const required = declared.scope === undefined ? [] : ([] as Scope[]).concat(declared.scope);
  if (required.length > 0 && !required.some((scope) => grants(access.scopes, scope))) {
    throw new AppError("forbidden", `Requires the ${required.join(" or ")} scope.`, {
      required_scope: required[0],
    });
  }
}

/**
 * For the rate limit (`provenAtOnce`): whether the request's operator credential has a principal
 * the cache holds, which the auth plugin then takes as is (`principalAtOnce`) instead of looking
 * it up again, so nothing can ask control between the two.
 */
export function cachedOperator(principals: PrincipalCache): (request: FastifyRequest) => boolean {
  return (request) => {
    const auth = request.routeOptions.config.access?.auth;
    if (auth !== "operator" && auth !== "session") return false;
    const credential = presentedCredential(request);
    if (!credential || looksLikeJwt(credential)) return false;
    request.principalAtOnce = principals.peek(credential);
    return request.principalAtOnce !== undefined;
  };
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

/** The request's path parameters (Fastify gives them as text, for every route that has any). */
function pathParams(request: FastifyRequest): Record<string, string> {
  const params: unknown = request.params;
  if (typeof params !== "object" || params === null) return {};
  return Object.fromEntries(
    Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}
