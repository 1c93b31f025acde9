import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError, isScope, type Queryable, ROLE_SCOPES } from "@evalp/kit";
import {
  type AuthenticateRequest,
  type AuthenticateResponse,
  AuthenticateResponseSchema,
  MembershipRoleSchema,
  type Principal,
  PrincipalKind,
  PrincipalSchema,
} from "@evalp/proto/control/v1/auth";
import { ACCESS_TOKEN_PREFIX, API_KEY_PATTERN, API_KEY_PREFIX, sha256 } from "../credentials.js";
import { environmentOwners, findApiKeyBySecret } from "../db/organizations.js";
import { activeMemberships, findSession } from "../db/users.js";
import type { Deps } from "../deps.js";
import { LEGACY_SCOPES, parseLegacyKeys } from "../legacy-keys.js";

const unauthenticated = () => new AppError("unauthenticated", "Missing or unknown credentials.");

/**
 * Resolves a presented credential into a principal. The credential's shape says which kind it
 * is: `evs_` access tokens, `evk_` API keys, anything else a legacy key from configuration.
 */
export function authenticate(deps: Deps) {
  const legacy = parseLegacyKeys(deps.config.LEGACY_API_KEYS);
  return async (req: AuthenticateRequest): Promise<AuthenticateResponse> => {
    const credential = req.credential;
    let principal: Principal;
    if (credential.startsWith(ACCESS_TOKEN_PREFIX)) principal = await sessionPrincipal(deps.pool, credential);
    else if (credential.startsWith(API_KEY_PREFIX)) principal = await apiKeyPrincipal(deps.pool, credential);
    else {
      const hash = sha256(credential).toString("hex");
      const environmentId = legacy.get(hash);
      if (!environmentId) throw unauthenticated();
      principal = await legacyPrincipal(deps.pool, hash, environmentId);
    }
    return create(AuthenticateResponseSchema, { principal });
  };
}

async function sessionPrincipal(db: Queryable, token: string): Promise<Principal> {
  const session = await findSession(db, token);
  if (!session || session.revoked) throw unauthenticated();
  if (session.expired) throw new AppError("token_expired", "The access token has expired.");
  const memberships = await activeMemberships(db, session.user_id);
  const active = memberships.some((m) => m.organization_id === session.active_organization_id)
    ? session.active_organization_id
    : (memberships[0]?.organization_id ?? null);
  const activeRole = memberships.find((m) => m.organization_id === active)?.role;
  return create(PrincipalSchema, {
    kind: PrincipalKind.SESSION,
    principalId: session.user_id,
    userId: session.user_id,
    email: session.email,
    activeOrganizationId: active ?? "",
    scopes: activeRole ? [...(ROLE_SCOPES[activeRole as keyof typeof ROLE_SCOPES] ?? [])] : [],
    memberships: memberships.map((m) =>
      create(MembershipRoleSchema, { organizationId: m.organization_id, role: m.role }),
    ),
    expiresAt: timestampFromDate(session.expires_at),
  });
}

async function apiKeyPrincipal(db: Queryable, key: string): Promise<Principal> {
  if (!API_KEY_PATTERN.test(key)) throw unauthenticated();
  const row = await findApiKeyBySecret(db, key);
  if (!row) throw unauthenticated();
  if (row.revoked) throw new AppError("api_key_revoked", "This API key has been revoked.");
  return create(PrincipalSchema, {
    kind: PrincipalKind.API_KEY,
    principalId: row.id,
    apiKeyName: row.name,
    userId: row.created_by_user_id ?? "",
    organizationId: row.organization_id,
    appId: row.app_id,
    environmentId: row.environment_id,
    scopes: row.scopes.filter(isScope),
  });
}

/** Legacy keys predate scoped keys: they reach their one environment with the data scopes (LEGACY_SCOPES). */
async function legacyPrincipal(db: Queryable, hash: string, environmentId: string): Promise<Principal> {
  const row = await environmentOwners(db, environmentId);
  if (!row) throw unauthenticated();
  return create(PrincipalSchema, {
    kind: PrincipalKind.LEGACY,
    principalId: `legacy_${hash.slice(0, 12)}`,
    organizationId: row.organization_id,
    appId: row.app_id,
    environmentId,
    scopes: [...LEGACY_SCOPES],
  });
}
