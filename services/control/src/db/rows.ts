import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type ApiKey, ApiKeySchema } from "@evalp/proto/control/v1/api_key";
import {
  type App,
  AppSchema,
  type Environment,
  EnvironmentSchema,
  type Organization,
  OrganizationSchema,
} from "@evalp/proto/control/v1/organization";

/** Row shapes as the control schema stores them, and their wire forms. */
export type OrganizationRow = { id: string; name: string; created_at: Date };
export type AppRow = {
  id: string;
  organization_id: string;
  slug: string;
  name: string;
  description: string | null;
  created_at: Date;
};
export type EnvironmentRow = { id: string; app_id: string; slug: string; name: string; created_at: Date };
export type ApiKeyRow = {
  id: string;
  environment_id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
};

export const APP_COLUMNS = "id, organization_id, slug, name, description, created_at";
export const ENVIRONMENT_COLUMNS = "id, app_id, slug, name, created_at";
export const API_KEY_COLUMNS = "id, environment_id, name, key_prefix, scopes, created_at, revoked_at";

export function organizationMessage(row: OrganizationRow): Organization {
  return create(OrganizationSchema, {
    id: row.id,
    name: row.name,
    createdAt: timestampFromDate(row.created_at),
  });
}

export function appMessage(row: AppRow): App {
  return create(AppSchema, {
    id: row.id,
    organizationId: row.organization_id,
    slug: row.slug,
    name: row.name,
    description: row.description ?? undefined,
    createdAt: timestampFromDate(row.created_at),
  });
}

export function environmentMessage(row: EnvironmentRow): Environment {
  return create(EnvironmentSchema, {
    id: row.id,
    appId: row.app_id,
    slug: row.slug,
    name: row.name,
    createdAt: timestampFromDate(row.created_at),
  });
}

export function apiKeyMessage(row: ApiKeyRow): ApiKey {
  return create(ApiKeySchema, {
    id: row.id,
    environmentId: row.environment_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    createdAt: timestampFromDate(row.created_at),
    revokedAt: row.revoked_at ? timestampFromDate(row.revoked_at) : undefined,
  });
}
