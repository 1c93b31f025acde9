import type { App, Environment } from "@evalp/proto/control/v1/organization";
import { Type } from "@sinclair/typebox";
import { iso } from "../../http/timestamps.js";
import { DateTime, Uuid } from "../schemas.js";

// The control plane's resources on the wire: their schemas (named components of the document)
// and the mappers from the RPC messages.

/** Slugs of apps and environments (contract §5b). */
export const Slug = Type.String({ pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$" });

export const Application = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    slug: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    created_at: DateTime,
  },
  { $id: "Application", title: "Application", description: "An app of an organization (contract §5b)." },
);

export function appJson(app: App | undefined) {
  if (!app) throw new Error("upstream returned no app");
  return {
    id: app.id,
    organization_id: app.organizationId,
    slug: app.slug,
    name: app.name,
    description: app.description ?? null,
    created_at: iso(app.createdAt),
  };
}

export const EnvironmentBody = Type.Object(
  { id: Uuid, app_id: Uuid, slug: Type.String(), name: Type.String(), created_at: DateTime },
  { $id: "Environment", title: "Environment", description: "An environment of an app (contract §5b)." },
);

export function environmentJson(environment: Environment | undefined) {
  if (!environment) throw new Error("upstream returned no environment");
  return {
    id: environment.id,
    app_id: environment.appId,
    slug: environment.slug,
    name: environment.name,
    created_at: iso(environment.createdAt),
  };
}

/** The named schemas of this plane, registered once with the app (components of the document). */
export const CONTROL_SCHEMAS = [Application, EnvironmentBody];
