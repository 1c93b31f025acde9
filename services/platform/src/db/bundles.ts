import type { BundleContents } from "@evalp/components";
import { isUuid, notFound, pageClause, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import { BUNDLE_COLUMNS, type BundleRow, COMPONENT_FIELDS, type DefinitionRow } from "./rows.js";

/** A bundle of the app; `forUpdate` locks it for a status move. */
export async function findBundle(
  db: Queryable,
  appId: string,
  bundleId: string,
  forUpdate = false,
): Promise<BundleRow> {
  if (!isUuid(bundleId)) throw notFound("bundle");
  const found = await db.query<BundleRow>(
    `SELECT ${BUNDLE_COLUMNS} FROM bundles WHERE id = $1 AND app_id = $2${forUpdate ? " FOR UPDATE" : ""}`,
    [bundleId, appId],
  );
  const row = found.rows[0];
  if (!row) throw notFound("bundle");
  return row;
}

/** The six contents of a bundle, by component kind. */
export async function bundleContents(db: Queryable, bundle: BundleRow): Promise<BundleContents> {
  const ids = COMPONENT_FIELDS.map(([field]) => bundle[field]);
  const found = await db.query<Pick<DefinitionRow, "id" | "content">>(
    "SELECT id, content FROM definitions WHERE id = ANY($1)",
    [ids],
  );
  const byId = new Map(found.rows.map((row) => [row.id, row.content]));
  return Object.fromEntries(
    COMPONENT_FIELDS.map(([field, kind]) => [kind, byId.get(bundle[field]) ?? null]),
  ) as BundleContents;
}

/** Moves a bundle to `status`, stamping `published_at` at its first publish. */
export async function moveBundle(db: Queryable, bundleId: string, status: string): Promise<BundleRow> {
  const updated = await db.query<BundleRow>(
    `UPDATE bundles SET status = $2, updated_at = date_trunc('milliseconds', clock_timestamp()),
       published_at = CASE WHEN $2 = 'published' THEN COALESCE(published_at, date_trunc('milliseconds', clock_timestamp()))
                           ELSE published_at END
     WHERE id = $1 RETURNING ${BUNDLE_COLUMNS}`,
    [bundleId, status],
  );
  return updated.rows[0] as BundleRow;
}

/**
 * Inserts a draft bundle as the next revision of its name in the app, the revisions of one name
 * numbered one after the other (an advisory lock on the name for the rest of the transaction).
 */
export async function insertBundle(
  tx: Queryable,
  bundle: {
    id: string;
    appId: string;
    name: string;
    fingerprint: string;
    components: string[];
    createdByUserId: string | null;
  },
): Promise<BundleRow> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    `bundle:${bundle.appId}:${bundle.name}`,
  ]);
  const inserted = await tx.query<BundleRow>(
    `INSERT INTO bundles (id, app_id, name, status, fingerprint, revision, ${COMPONENT_FIELDS.map(([f]) => f).join(", ")},
       created_by_user_id)
     SELECT $1, $2, $3, 'draft', $4, 1 + count(*), $5, $6, $7, $8, $9, $10, $11
     FROM bundles WHERE app_id = $2 AND name = $3
     RETURNING ${BUNDLE_COLUMNS}`,
    [bundle.id, bundle.appId, bundle.name, bundle.fingerprint, ...bundle.components, bundle.createdByUserId],
  );
  return inserted.rows[0] as BundleRow;
}

/** A page of the app's bundles, newest first, of one status when given. */
export async function listBundleRows(
  db: Queryable,
  appId: string,
  status: string | null,
  page: PageRequest | undefined,
): Promise<BundleRow[]> {
  const clause = pageClause(page, 3);
  const found = await db.query<BundleRow>(
    `SELECT ${BUNDLE_COLUMNS} FROM bundles WHERE app_id = $1 AND ($2::text IS NULL OR status = $2)
     AND ${clause.where} ${clause.tail}`,
    [appId, status, ...clause.params],
  );
  return found.rows;
}
