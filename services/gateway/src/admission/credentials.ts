import { hash, randomUUID } from "node:crypto";
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
import type { FastifyRequest } from "fastify";
import { LRUCache } from "lru-cache";
import type { Logger } from "pino";
import { broadcastOf, type RedisClient } from "../redis.js";
import type { Upstreams } from "../upstream.js";
import { callOptions } from "../upstream.js";

// How the admission step proves a request's credential (docs/authentication.md): what a route
// declares of its callers, which credential a request presents, whom it names (the principal and
// its access, as the request carries them), and what that one may do on the route; and the cache
// of principals control already named, which every gateway forgets as credentials change.

/** How a caller authenticated (docs/authentication.md); the `kind` of AuthPrincipal. */
export type PrincipalKind = "session" | "api_key" | "legacy";

/**
 * The caller as the gateway knows it after authentication. A session reaches every
 * organization it is a member of; a key reaches exactly one environment.
 */
export type Principal = {
  kind: PrincipalKind;
  principalId: string;
  userId: string | null;
  email: string | null;
  apiKeyName: string | null;
  /** Keys: where the key lives. */
  keyReach: { organizationId: string; appId: string; environmentId: string } | null;
  /** Sessions: role per organization, and the active organization. */
  roles: Map<string, string>;
  activeOrganizationId: string | null;
  /** Scopes as reported by GET /v1/auth/principal (for sessions: the active organization's role). */
  scopes: string[];
  /** Sessions: when the access token expires; keys do not expire. */
  expiresAt: Date | null;
};

/** What a request may do once its principal was checked against the route's path. */
export type Access = {
  principal: Principal;
  /** The scopes effective for this request (for sessions: the role in the path's organization). */
  scopes: string[];
  /** The organization the request acts in, when the path or the credential names one. */
  organizationId: string | null;
};

/** What a route declares about who may call it. */
export type RouteAccess = {
  /**
   * `none`: public; `operator`: any operator credential; `session`: access tokens and cookies only;
   * `participant`: a participant token only (`/v1/participant/*`); `connection`: a connection
   * token only (the realtime door); `agent`: an agent token only (`/v1/agent/*`, docs/interview.md#the-agent-protocol).
   */
  auth: "none" | "operator" | "session" | "participant" | "connection" | "agent";
  /** The scope the route requires; a list means any one of them (template reads, docs/authentication.md). */
  scope?: Scope | readonly Scope[];
  /** `required` on the (IK) endpoints and org-scoped mutations (docs/idempotency.md); else honoured when sent. */
  idempotency?: "required" | "optional" | "none";
  /**
   * The route changes who a credential is or what it reaches, and what every gateway must then
   * forget of the principals it cached: `credential` the caller's own (logout, the active
   * organization), `user` every credential of the caller's user (a new organization), `{ param }`
   * the principal whose id is that path parameter (a key's revocation), `all` everything (a
   * password reset, an accepted invitation: the gateway cannot tell whose credentials).
   */
  changesPrincipals?: "credential" | "user" | { param: string } | "all";
  /**
   * An anonymous route that makes control hash a password (sign-up, invitations, reset confirm):
   * counted per client address once the request passed validation (attempt-limit.ts).
   */
  hashesPassword?: true;
};

/** The participant side's caller: the session its verified token is bound to. */
export type ParticipantAccess = {
  sessionId: string;
  evaluationId: string;
  environmentId: string;
  /** When the token stops opening anything (the realtime door closes then). */
  expiresAt: Date;
};

/** Where the caller sits: on the route's config (what it declares) and on the request (who it is). */
declare module "fastify" {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** Set by the auth check (admission/checks.ts) on operator routes. */
    access?: Access;
    /** Set by the auth check on participant and realtime routes. */
    participant?: ParticipantAccess;
    /** Set by the auth check on agent routes: the agent session its token is bound to. */
    agent?: ParticipantAccess;
    /** The credential as presented, for logout; never logged. */
    credential?: string;
  }
}

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

/** The gateway's principal of control's answer to `authenticate`. */
export function toPrincipal(wire: WirePrincipal): Principal {
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
 * What an operator principal may do on a route: its access (known once its reach is, so that a
 * refusal for scope is still logged and answered as the principal's), and the refusal, if any:
 * 404 across organizations, then 403 for a key on a session's route or a missing scope.
 */
function authorize(
  principal: Principal,
  declared: RouteAccess,
  params: Record<string, string>,
): { access?: Access; refusal?: AppError } {
  let access: Access;
  try {
    // Reach first: another organization is 404 for every credential, on a session-only route too
    // (`POST ORG/memberships`), so that no answer depends on whether the organization exists.
    access = resolveAccess(principal, params);
  } catch (error) {
    if (error instanceof AppError) return { refusal: error };
    throw error;
  }
  if (declared.auth === "session" && principal.kind !== "session") {
    const refusal = new AppError("forbidden", "This endpoint takes a user session, not an API key.", {
      reason: "session_required",
    });
    return { access, refusal };
  }
  const required = declared.scope === undefined ? [] : ([] as Scope[]).concat(declared.scope);
  if (required.length > 0 && !required.some((scope) => grants(access.scopes, scope))) {
    const refusal = new AppError("forbidden", `Requires the ${required.join(" or ")} scope.`, {
      required_scope: required[0],
    });
    return { access, refusal };
  }
  return { access };
}

/**
 * Who a request's credential is, as far as its route asks: `none` for a public route;
 * `refused` (401) when it presents no credential of the route's kind or one that proves nothing;
 * an operator (with what it may do here, or its refusal), a participant or an agent once proven.
 */
export type Identity =
  | { kind: "none" }
  | { kind: "refused"; refusal: AppError }
  | { kind: "operator"; credential: string; principal: Principal; access?: Access; refusal?: AppError }
  | { kind: "participant"; credential: string; participant: ParticipantAccess }
  | { kind: "agent"; credential: string; agent: ParticipantAccess };

/** What proves credentials: control's principals (cached) and the secret participant tokens are signed with. */
export type Provers = { upstreams: Upstreams; principals: PrincipalCache; jwtSecret: string };

/**
 * The request's identity when it is known without asking anyone (a token verified here, a
 * principal the cache holds), else the operator credential control must be asked about.
 */
export async function identityAtOnce(
  request: FastifyRequest,
  provers: Provers,
): Promise<Identity | { kind: "ask"; credential: string }> {
  const declared = request.routeOptions.config.access;
  if (!declared || declared.auth === "none") return { kind: "none" };
  if (declared.auth === "participant" || declared.auth === "connection" || declared.auth === "agent") {
    // docs/interview.md#the-agent-protocol: an agent token opens only `/v1/agent/*` (header, or the socket's subprotocol).
    const token =
      declared.auth === "participant" ? presentedCredential(request) : connectionCredential(request);
    if (!token) return refused(new AppError("unauthenticated", "Authentication required."));
    try {
      if (declared.auth === "agent")
        return {
          kind: "agent",
          credential: token,
          agent: await verifyParticipantToken(provers.jwtSecret, "agent", token),
        };
      const participant = await verifyParticipantToken(provers.jwtSecret, declared.auth, token);
      return { kind: "participant", credential: token, participant };
    } catch (error) {
      if (error instanceof AppError) return refused(error);
      throw error;
    }
  }
  const credential = presentedCredential(request);
  if (!credential) return refused(new AppError("unauthenticated", "Authentication required."));
  if (looksLikeJwt(credential)) {
    // A participant or connection token is no operator credential (docs/authentication.md).
    return refused(new AppError("unauthenticated", "This token is accepted only under /v1/participant/."));
  }
  const principal = provers.principals.peek(credential);
  if (!principal) return { kind: "ask", credential };
  return operator(request, declared, credential, principal);
}

/** The identity of an operator credential the cache did not hold: control's answer (then cached). */
export async function identityAsked(
  request: FastifyRequest,
  credential: string,
  provers: Provers,
): Promise<Identity> {
  const declared = request.routeOptions.config.access;
  if (!declared) return { kind: "none" };
  const principal = await provers.principals.lookup(credential, async () => {
    const { principal: wire } = await provers.upstreams.auth.authenticate(
      { credential },
      callOptions(request),
    );
    if (!wire) throw new Error("upstream returned no principal");
    return toPrincipal(wire);
  });
  return operator(request, declared, credential, principal);
}

function operator(
  request: FastifyRequest,
  declared: RouteAccess,
  credential: string,
  principal: Principal,
): Identity {
  return { kind: "operator", credential, principal, ...authorize(principal, declared, pathParams(request)) };
}

function refused(refusal: AppError): Identity {
  return { kind: "refused", refusal };
}

/** The request's path parameters (Fastify gives them as text, for every route that has any). */
export function pathParams(request: FastifyRequest): Record<string, string> {
  const params: unknown = request.params;
  if (typeof params !== "object" || params === null) return {};
  return Object.fromEntries(
    Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/** At most this many credentials are remembered per gateway; the least recently used go first. */
const MAX_ENTRIES = 10_000;

/**
 * What a credential change touched, as every gateway must forget it: the principals resolved
 * from one credential (a logout, a session's active organization), every principal of a user (a
 * new organization), the principal of one key (a revocation), or, where the gateway cannot tell
 * whom a change touched (a password reset, an accepted invitation), all of them.
 */
export type PrincipalChange =
  | { credential: string }
  | { userId: string }
  | { principalId: string }
  | { all: true };

/**
 * How a change travels between gateways: never the credential itself, only its SHA-256; with the
 * id its publisher waits to hear acknowledged (`heard`) by every gateway it reached.
 */
type ChangeMessage = { credential_sha256?: string; user_id?: string; principal_id?: string };
/** What a message on the channel says: a change (acknowledged when it has an id), or an acknowledgement. */
type ChannelMessage = { change: ChangeMessage; id: string | null } | { heard: string };

const sha256 = (text: string) => hash("sha256", text, "base64url");

/** How long a change's answer waits for every gateway to say it forgot what the change touched. */
const HEARD_WITHIN_MS = 1_000;

/**
 * Resolved principals by credential, so that a request does not ask control who its caller is
 * every time (that question was half the cost of a simple read).
 *
 * A cached principal must never outlive a change to its credential: a revoked key answers 401
 * on the very next request. Three rules keep it so:
 * - every gateway forgets what a change touched when any gateway relays that change (`forget`,
 *   called before the change's answer is sent, whatever that answer is: a change that timed out
 *   may still have been made; other gateways hear it on a Redis channel), and the answer waits
 *   until every gateway the message reached has said it forgot (a publish answers once Redis
 *   queued the message, not once a gateway read it: a busy or descheduled gateway could still
 *   serve the old principal to a client that already had the change's answer). A gateway that
 *   does not say so within HEARD_WITHIN_MS (stopped, or of a release that does not acknowledge)
 *   is waited for no longer, and the wait is logged;
 * - a principal resolved while a change that touches it was being forgotten is not stored, so a
 *   lookup that raced with a revocation cannot put the old answer back (changes to others do
 *   not keep it out);
 * - while the channel is not subscribed (Redis down, reconnecting), nothing is cached: a missed
 *   message could otherwise leave a stale entry behind.
 * Entries also expire after `ttlMs` and at the session's own expiry, whichever comes first: that
 * bounds what no gateway could relay (a change made in the database directly, or a gateway that
 * died between the change and its message).
 */
export type PrincipalCache = {
  /** The principal of a credential, from the cache or from `resolve` (whose errors pass through). */
  lookup(credential: string, resolve: () => Promise<Principal>): Promise<Principal>;
  /** The principal of a credential if the cache holds it (what `lookup` would answer at once), else undefined. */
  peek(credential: string): Principal | undefined;
  /** Forgets what a change touched, here and (over the channel) on every other gateway. */
  forget(change: PrincipalChange): Promise<void>;
  close(): Promise<void>;
};

export function createPrincipalCache(options: {
  redis: RedisClient;
  channel: string;
  ttlMs: number;
  logger: Logger;
  /** Tests shorten it; HEARD_WITHIN_MS otherwise. */
  heardWithinMs?: number;
}): PrincipalCache {
  const { redis, channel, ttlMs, logger, heardWithinMs = HEARD_WITHIN_MS } = options;
  // Keyed by the credential's SHA-256, so that a change can name a credential without sending it.
  const entries = new LRUCache<string, { principal: Principal; until: number }>({ max: MAX_ENTRIES });
  let listening = false;
  // Lookups waiting for control, each with the changes heard meanwhile: its answer is not stored
  // if one of them touched it (it may predate the change).
  const pending = new Set<ChangeMessage[]>();
  const drop = (message: ChangeMessage) => {
    for (const heard of pending) heard.push(message);
    if (message.credential_sha256) entries.delete(message.credential_sha256);
    else if (message.user_id || message.principal_id) {
      // A scan of at most MAX_ENTRIES, on a change of credentials (rare next to lookups).
      const touched: string[] = [];
      for (const [key, { principal }] of entries.entries()) {
        if (touches(message, key, principal)) touched.push(key);
      }
      for (const key of touched) entries.delete(key);
    } else entries.clear();
  };
  const dropAll = () => drop({});
  // Changes this gateway published, each with the acknowledgements it still needs.
  const awaiting = new Map<string, { heard: number; expected: number; done(): void }>();
  const acknowledged = (id: string) => {
    const waiter = awaiting.get(id);
    if (!waiter) return;
    waiter.heard += 1;
    if (waiter.heard >= waiter.expected) waiter.done();
  };

  // Whatever was published while the channel was down is lost: forget everything on the way down
  // and cache again only once subscribed anew (redis.ts's broadcastOf).
  const broadcast =
    ttlMs > 0
      ? broadcastOf(redis, channel, (error) =>
          logger.warn({ err: error }, "principal cache: subscribe failed"),
        )
      : null;
  broadcast?.listen({
    onMessage: (text) => {
      const message = parseChange(text);
      if ("heard" in message) return acknowledged(message.heard);
      drop(message.change);
      if (message.id === null || !broadcast) return;
      broadcast.publish(JSON.stringify({ heard: message.id })).catch((error: unknown) => {
        logger.warn({ err: error }, "principal cache: could not acknowledge a credential change");
      });
    },
    onLost: () => {
      if (listening) logger.warn("principal cache off: invalidation channel lost");
      listening = false;
      dropAll();
    },
    onListening: () => {
      dropAll();
      listening = true;
    },
  });

  return {
    peek(credential) {
      const hit = listening ? entries.get(sha256(credential)) : undefined;
      return hit && hit.until > Date.now() ? hit.principal : undefined;
    },
    async lookup(credential, resolve) {
      const now = Date.now();
      const key = sha256(credential);
      const hit = listening ? entries.get(key) : undefined;
      if (hit && hit.until > now) return hit.principal;
      const heard: ChangeMessage[] = [];
      pending.add(heard);
      let principal: Principal;
      try {
        principal = await resolve();
      } finally {
        pending.delete(heard);
      }
      const until = Math.min(now + ttlMs, principal.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY);
      const unchanged = !heard.some((change) => touches(change, key, principal));
      if (listening && unchanged && until > Date.now()) {
        entries.set(key, { principal, until });
      }
      return principal;
    },
    async forget(change) {
      const message: ChangeMessage =
        "credential" in change
          ? { credential_sha256: sha256(change.credential) }
          : "userId" in change
            ? { user_id: change.userId }
            : "principalId" in change
              ? { principal_id: change.principalId }
              : {};
      drop(message);
      if (!broadcast) return;
      const id = randomUUID();
      const waiter = { heard: 0, expected: Number.POSITIVE_INFINITY, done: () => {} };
      const allHeard = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), heardWithinMs);
        waiter.done = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      awaiting.set(id, waiter);
      try {
        // Redis down means every gateway's channel is down too, so none of them is caching.
        const reached = await broadcast
          .publish(JSON.stringify({ ...message, change_id: id }))
          .catch((error: unknown) => {
            logger.warn({ err: error }, "principal cache: could not publish a credential change");
            return 0;
          });
        // The subscriptions the message reached, this gateway's own among them.
        waiter.expected = typeof reached === "number" ? reached : 0;
        if (waiter.heard >= waiter.expected) waiter.done();
        if (!(await allHeard)) {
          logger.warn(
            { heard: waiter.heard, reached: waiter.expected },
            "principal cache: not every gateway acknowledged a credential change in time",
          );
        }
      } finally {
        awaiting.delete(id);
      }
    },
    async close() {
      listening = false;
      dropAll();
      broadcast?.close();
    },
  };
}

/** Whether `change` touches the principal cached under `key` (a credential's SHA-256). */
function touches(change: ChangeMessage, key: string, principal: Principal): boolean {
  if (change.credential_sha256) return change.credential_sha256 === key;
  if (change.user_id) return principal.userId === change.user_id;
  if (change.principal_id) return principal.principalId === change.principal_id;
  return true;
}

/**
 * A message on the channel: a change as a gateway published it, or a gateway's acknowledgement of
 * one. The channel is trusted no further than it must be: anything but a well-formed message
 * naming one thing forgets everything (the safe reading). A change is acknowledged when it carries
 * a well-formed `change_id` (every publisher of this release sends one; an earlier one does not).
 */
function parseChange(text: string): ChannelMessage {
  const everything: ChannelMessage = { change: {}, id: null };
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return everything;
    const { change_id: id, ...named } = value as Record<string, unknown>;
    const changeId = typeof id === "string" && isUuid(id) ? id : null;
    const fields = Object.entries(named);
    if (fields.length !== 1) return { change: {}, id: changeId };
    const [name, field] = fields[0] as [string, unknown];
    if (typeof field !== "string" || field.length === 0 || field.length > 200)
      return { change: {}, id: changeId };
    if (name === "heard") return id === undefined && isUuid(field) ? { heard: field } : everything;
    if (name === "credential_sha256" || name === "user_id" || name === "principal_id")
      return { change: { [name]: field }, id: changeId };
    return { change: {}, id: changeId };
  } catch {
    return everything;
  }
}
