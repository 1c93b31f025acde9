import type { Queryable } from "@evalp/kit";

/** An environment as the import path finds it: its organization, app and quota. */
export type EnvironmentRef = { organizationId: string; appId: string; environmentId: string };

/** Stores `ref`'s organization, app (slug `app`) and environment (slug `live`), with the default quota. */
export async function storeEnvironment(db: Queryable, ref: EnvironmentRef): Promise<void> {
  await db.query("INSERT INTO organizations (id, name) VALUES ($1, 'Org')", [ref.organizationId]);
  await db.query("INSERT INTO apps (id, organization_id, slug, name) VALUES ($1, $2, 'app', 'App')", [
    ref.appId,
    ref.organizationId,
  ]);
  await db.query("INSERT INTO environments (id, app_id, slug, name) VALUES ($1, $2, 'live', 'Live')", [
    ref.environmentId,
    ref.appId,
  ]);
  await db.query("INSERT INTO quotas (environment_id) VALUES ($1)", [ref.environmentId]);
}

/** Stores `count` subjects of the environment, with the external ids `user-1` … `user-<count>`. */
export async function storeSubjects(db: Queryable, environmentId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
     SELECT gen_random_uuid(), $1, 'user-' || n, 'self_managed', '{}' FROM generate_series(1, $2) AS n`,
    [environmentId, count],
  );
}
