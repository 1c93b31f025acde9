import { newId, pageClause, preparedStatement, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import { sha256 } from "../credentials.js";
import {
  API_KEY_COLUMNS,
  APP_COLUMNS,
  type ApiKeyRow,
  type AppRow,
  ENVIRONMENT_COLUMNS,
  type EnvironmentRow,
  type OrganizationRow,
} from "./rows.js";

/*
 * Reads of the organization tree: organizations, their apps, the apps' environments and the
 * environments' API keys.
 */

export async function findOrganization(
  db: Queryable,
  organizationId: string,
): Promise<OrganizationRow | undefined> {
  const found = await db.query<OrganizationRow>(
    "SELECT id, name, created_at FROM organizations WHERE id = $1",
    [organizationId],
  );
  return found.rows[0];
}

/** Prepared: `GET APP`, the hottest read. */
const FIND_APP = preparedStatement(
  "control.find_app",
  `SELECT ${APP_COLUMNS} FROM apps WHERE id = $1 AND organization_id = $2`,
);

export async function findApp(
  db: Queryable,
  organizationId: string,
  appId: string,
): Promise<AppRow | undefined> {
  const found = await db.query<AppRow>(FIND_APP([appId, organizationId]));
  return found.rows[0];
}

/** Prepared: every request on an environment's path resolves it. */
const FIND_ENVIRONMENT = preparedStatement(
  "control.find_environment",
  `SELECT ${ENVIRONMENT_COLUMNS} FROM environments WHERE id = $1`,
);

export async function findEnvironment(
  db: Queryable,
  environmentId: string | undefined,
): Promise<EnvironmentRow | undefined> {
  const found = await db.query<EnvironmentRow>(FIND_ENVIRONMENT([environmentId]));
  return found.rows[0];
}

/** A page of an organization's apps, newest first. */
export async function listAppRows(
  db: Queryable,
  organizationId: string,
  page: PageRequest | undefined,
): Promise<AppRow[]> {
  const clause = pageClause(page, 2);
  const found = await db.query<AppRow>(
    `SELECT ${APP_COLUMNS} FROM apps WHERE organization_id = $1 AND ${clause.where} ${clause.tail}`,
    [organizationId, ...clause.params],
  );
  return found.rows;
}

/** A page of an app's environments, newest first. */
export async function listEnvironmentRows(
  db: Queryable,
  appId: string,
  page: PageRequest | undefined,
): Promise<EnvironmentRow[]> {
  const clause = pageClause(page, 2);
  const found = await db.query<EnvironmentRow>(
    `SELECT ${ENVIRONMENT_COLUMNS} FROM environments WHERE app_id = $1 AND ${clause.where} ${clause.tail}`,
    [appId, ...clause.params],
  );
  return found.rows;
}

/** A page of an environment's API keys, newest first. */
export async function listApiKeyRows(
  db: Queryable,
  environmentId: string | undefined,
  page: PageRequest | undefined,
): Promise<ApiKeyRow[]> {
  const clause = pageClause(page, 2);
  const found = await db.query<ApiKeyRow>(
    `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE environment_id = $1 AND ${clause.where} ${clause.tail}`,
    [environmentId, ...clause.params],
  );
  return found.rows;
}

/** The scopes of an API key of the environment that is not revoked. */
export async function apiKeyScopes<S>(db: Queryable, keyId: string, environmentId: string): Promise<S[]> {
  const found = await db.query<{ scopes: S[] }>(
    "SELECT scopes FROM api_keys WHERE id = $1 AND environment_id = $2 AND revoked_at IS NULL",
    [keyId, environmentId],
  );
  return found.rows[0]?.scopes ?? [];
}

/** The API key a secret is, with where it reaches. */
export async function findApiKeyBySecret(db: Queryable, secret: string) {
  const found = await db.query<{
    id: string;
    name: string;
    scopes: string[];
    environment_id: string;
    app_id: string;
    organization_id: string;
    created_by_user_id: string | null;
    revoked: boolean;
  }>(
    `SELECT k.id, k.name, k.scopes, k.environment_id, e.app_id, a.organization_id, k.created_by_user_id,
            k.revoked_at IS NOT NULL AS revoked
     FROM api_keys k JOIN environments e ON e.id = k.environment_id JOIN apps a ON a.id = e.app_id
     WHERE k.secret_hash = $1`,
    [sha256(secret)],
  );
  return found.rows[0];
}

/** The app and organization of an environment. */
export async function environmentOwners(
  db: Queryable,
  environmentId: string,
): Promise<{ app_id: string; organization_id: string } | undefined> {
  const found = await db.query<{ app_id: string; organization_id: string }>(
    "SELECT e.app_id, a.organization_id FROM environments e JOIN apps a ON a.id = e.app_id WHERE e.id = $1",
    [environmentId],
  );
  return found.rows[0];
}

/** Inserts an organization. */
export async function insertOrganization(db: Queryable, id: string, name: string): Promise<OrganizationRow> {
  const inserted = await db.query<OrganizationRow>(
    "INSERT INTO organizations (id, name) VALUES ($1, $2) RETURNING id, name, created_at",
    [id, name],
  );
  return inserted.rows[0] as OrganizationRow;
}

/** Inserts an app of an organization; undefined when the organization does not exist. */
export async function insertApp(
  db: Queryable,
  app: { organizationId: string; slug: string; name: string; description: string | null },
): Promise<AppRow | undefined> {
  const inserted = await db.query<AppRow>(
    `INSERT INTO apps (id, organization_id, slug, name, description)
     SELECT $1, id, $3, $4, $5 FROM organizations WHERE id = $2
     RETURNING ${APP_COLUMNS}`,
    [newId(), app.organizationId, app.slug, app.name, app.description],
  );
  return inserted.rows[0];
}

/** Inserts an environment of an app. */
export async function insertEnvironment(
  db: Queryable,
  environment: { appId: string; slug: string; name: string },
): Promise<EnvironmentRow> {
  const inserted = await db.query<EnvironmentRow>(
    `INSERT INTO environments (id, app_id, slug, name) VALUES ($1, $2, $3, $4)
     RETURNING ${ENVIRONMENT_COLUMNS}`,
    [newId(), environment.appId, environment.slug, environment.name],
  );
  return inserted.rows[0] as EnvironmentRow;
}

/** Inserts an API key; only the SHA-256 of its secret is kept. */
export async function insertApiKey(
  db: Queryable,
  key: {
    environmentId: string | undefined;
    name: string;
    prefix: string;
    secret: string;
    scopes: string[];
    createdByUserId: string | null;
  },
): Promise<ApiKeyRow> {
  const inserted = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, environment_id, name, key_prefix, secret_hash, scopes, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${API_KEY_COLUMNS}`,
    [newId(), key.environmentId, key.name, key.prefix, sha256(key.secret), key.scopes, key.createdByUserId],
  );
  return inserted.rows[0] as ApiKeyRow;
}

/** Revokes an API key of the environment (once); the key and whether it was revoked already. */
export async function revokeApiKeyRow(
  db: Queryable,
  keyId: string,
  environmentId: string | undefined,
): Promise<(ApiKeyRow & { already: boolean }) | undefined> {
  const updated = await db.query<ApiKeyRow & { already: boolean }>(
    `WITH before AS (SELECT revoked_at FROM api_keys WHERE id = $1 AND environment_id = $2)
     UPDATE api_keys SET revoked_at = COALESCE(revoked_at, date_trunc('milliseconds', clock_timestamp()))
     WHERE id = $1 AND environment_id = $2
     RETURNING ${API_KEY_COLUMNS}, (SELECT revoked_at IS NOT NULL FROM before) AS already`,
    [keyId, environmentId],
  );
  return updated.rows[0];
}
