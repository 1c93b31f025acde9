import type { Scope } from "@evalp/kit";

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
