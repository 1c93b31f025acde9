/** Every scope of docs/authentication.md. */
export const SCOPES = [
  "org:read",
  "org:admin",
  "apps:write",
  "keys:write",
  "quotas:write",
  "subjects:write",
  "subjects:read",
  "bundles:read",
  "bundles:write",
  "templates:write",
  "webhooks:read",
  "webhooks:write",
  "continuous:write",
  "evaluations:read",
  "evaluations:write",
  "analytics:read",
  "audit:read",
  "interviews:agent",
] as const;

export type Scope = (typeof SCOPES)[number];

export const ROLES = ["owner", "admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** The scope an agent key carries alone (docs/authentication.md, docs/interview.md#the-agent-protocol). */
export const AGENT_SCOPE: Scope = "interviews:agent";

const MEMBER_EXCLUDED: readonly Scope[] = ["org:admin", "keys:write", "quotas:write"];

/** The scopes a membership role grants (docs/authentication.md). */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: SCOPES,
  admin: SCOPES,
  member: SCOPES.filter((scope) => !MEMBER_EXCLUDED.includes(scope)),
  viewer: SCOPES.filter((scope) => scope.endsWith(":read")),
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/**
 * Whether `held` satisfies `required`: a scope grants itself, `X:write` grants `X:read`,
 * `org:admin` grants `org:read`, and template reads pass with `templates:write` (docs/authentication.md).
 */
export function grants(held: readonly string[], required: Scope): boolean {
  if (held.includes(required)) return true;
  if (required === "org:read" && held.includes("org:admin")) return true;
  if (required.endsWith(":read")) {
    const resource = required.slice(0, -":read".length);
    if (held.includes(`${resource}:write`)) return true;
  }
  return false;
}
