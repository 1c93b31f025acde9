import { type Actor, LEGACY_SCOPES, type Queryable, ROLE_SCOPES, type Scope } from "@evalp/kit";

/**
 * What the actor of a call may do in an environment, as control knows it (not as the caller says):
 * a session's user, its role in the environment's organization; an API key, its own scopes in
 * its own environment; a legacy key, the legacy data scopes. The actor comes from the caller's
 * verified service token; anything else may do nothing.
 */
export async function actorScopes(
  db: Queryable,
  actor: Actor | null,
  environment: { organizationId: string; environmentId: string },
): Promise<readonly Scope[]> {
  if (!actor) return [];
  if (actor.kind === "session") {
    const found = await db.query<{ role: string }>(
      "SELECT role FROM memberships WHERE user_id = $1 AND organization_id = $2 AND status = 'active'",
      [actor.id, environment.organizationId],
    );
    const role = found.rows[0]?.role;
    return role ? (ROLE_SCOPES[role as keyof typeof ROLE_SCOPES] ?? []) : [];
  }
  if (actor.kind === "api_key") {
    const found = await db.query<{ scopes: Scope[] }>(
      "SELECT scopes FROM api_keys WHERE id = $1 AND environment_id = $2 AND revoked_at IS NULL",
      [actor.id, environment.environmentId],
    );
    return found.rows[0]?.scopes ?? [];
  }
  if (actor.kind === "legacy") return LEGACY_SCOPES;
  return [];
}
