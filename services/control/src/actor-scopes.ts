import { type Actor, type Queryable, ROLE_SCOPES, type Scope } from "@evalp/kit";
import { activeRole } from "./db/membership-rows.js";
import { apiKeyScopes } from "./db/organizations.js";
import { LEGACY_SCOPES } from "./legacy-keys.js";

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
    const role = await activeRole(db, actor.id, environment.organizationId);
    return role ? (ROLE_SCOPES[role as keyof typeof ROLE_SCOPES] ?? []) : [];
  }
  if (actor.kind === "api_key") {
    return apiKeyScopes<Scope>(db, actor.id, environment.environmentId);
  }
  if (actor.kind === "legacy") return LEGACY_SCOPES;
  return [];
}
