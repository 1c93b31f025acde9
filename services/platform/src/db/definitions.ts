import { COMPONENT_KINDS } from "@evalp/components";
import { AppError, newId, type Queryable } from "@evalp/kit";
import type { DefinitionInput } from "@evalp/proto/platform/v1/template";
import { contentHash } from "../content-hash.js";
import { DEFINITION_COLUMNS, type DefinitionRow } from "./rows.js";

/**
 * Creation checks only that `content` is an object whose `kind` is one of the six (contract
 * docs/endpoints.md); its full shape is checked when a bundle using it enters `validated`.
 */
export function contentKind(content: unknown): string {
  const kind = (content as { kind?: unknown } | null)?.kind;
  if (typeof kind !== "string" || !(COMPONENT_KINDS as readonly string[]).includes(kind)) {
    // The gateway's schema refuses this first; a direct caller gets the same rule.
    throw new AppError("validation_error", `content.kind must be one of ${COMPONENT_KINDS.join(", ")}`);
  }
  return kind;
}

/**
 * Inserts the next revision of (template, business_id, locale): one more than the last. The
 * caller holds the template's lock, so concurrent additions number their revisions in turn.
 */
export async function insertDefinition(
  tx: Queryable,
  values: {
    templateId: string;
    appId: string;
    input: DefinitionInput;
    kind: string;
    createdByUserId?: string | undefined;
  },
): Promise<DefinitionRow> {
  const content = values.input.content ?? {};
  const inserted = await tx.query<DefinitionRow>(
    `INSERT INTO definitions (id, template_id, app_id, business_id, locale, name, kind, content, content_hash, revision,
       created_by_user_id)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9,
       COALESCE(MAX(revision), 0) + 1, $10
     FROM definitions WHERE template_id = $2 AND business_id = $4 AND locale = $5
     RETURNING ${DEFINITION_COLUMNS}`,
    [
      newId(),
      values.templateId,
      values.appId,
      values.input.businessId,
      values.input.locale,
      values.input.name,
      values.kind,
      content,
      contentHash(content),
      values.createdByUserId ?? null,
    ],
  );
  return inserted.rows[0] as DefinitionRow;
}

/** Serializes revision numbering within one template for the rest of the transaction. */
export async function lockTemplate(tx: Queryable, templateId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`template:${templateId}`]);
}

/** The latest revision of each (business_id, locale) of a template. */
export async function latestDefinitions(db: Queryable, templateId: string): Promise<DefinitionRow[]> {
  const latest = await db.query<DefinitionRow>(
    `SELECT DISTINCT ON (business_id, locale) ${DEFINITION_COLUMNS} FROM definitions WHERE template_id = $1
     ORDER BY business_id, locale, revision DESC`,
    [templateId],
  );
  return latest.rows;
}

/** A copy of a definition as the first revision of another template, under another business id. */
export async function copyDefinition(
  db: Queryable,
  source: DefinitionRow,
  copy: { templateId: string; businessId: string; createdByUserId: string | null },
): Promise<DefinitionRow> {
  const inserted = await db.query<DefinitionRow>(
    `INSERT INTO definitions (id, template_id, app_id, business_id, locale, name, kind, content, content_hash,
       revision, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10) RETURNING ${DEFINITION_COLUMNS}`,
    [
      newId(),
      copy.templateId,
      source.app_id,
      copy.businessId,
      source.locale,
      source.name,
      source.kind,
      source.content,
      source.content_hash,
      copy.createdByUserId,
    ],
  );
  return inserted.rows[0] as DefinitionRow;
}

/** What a bundle needs of its component definitions: their app, kind and content hash. */
export async function definitionKinds(
  db: Queryable,
  ids: string[],
): Promise<Array<Pick<DefinitionRow, "id" | "app_id" | "kind" | "content_hash">>> {
  const found = await db.query<Pick<DefinitionRow, "id" | "app_id" | "kind" | "content_hash">>(
    "SELECT id, app_id, kind, content_hash FROM definitions WHERE id = ANY($1)",
    [ids],
  );
  return found.rows;
}

/** Stamps `published_at` on definitions published for the first time. */
export async function stampPublished(db: Queryable, ids: string[], at: Date | null): Promise<void> {
  await db.query("UPDATE definitions SET published_at = COALESCE(published_at, $2) WHERE id = ANY($1)", [
    ids,
    at,
  ]);
}
