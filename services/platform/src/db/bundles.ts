import type { BundleContents } from "@evalp/components";
import { isUuid, notFound, type Queryable } from "@evalp/kit";
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
