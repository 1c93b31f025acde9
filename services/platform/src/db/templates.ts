import { isUuid, notFound, type Queryable } from "@evalp/kit";
import { DEFINITION_COLUMNS, type DefinitionRow, type TemplateRow } from "./rows.js";

/** A template of the app (404 for another app's or a malformed id). */
export async function findTemplate(db: Queryable, appId: string, templateId: string): Promise<TemplateRow> {
  if (!isUuid(templateId)) throw notFound("template");
  const found = await db.query<TemplateRow>(
    "SELECT id, app_id, name, created_at FROM templates WHERE id = $1 AND app_id = $2",
    [templateId, appId],
  );
  const row = found.rows[0];
  if (!row) throw notFound("template");
  return row;
}

/** Every definition of a template, in the order they were made. */
export async function templateDefinitions(db: Queryable, templateId: string): Promise<DefinitionRow[]> {
  const found = await db.query<DefinitionRow>(
    `SELECT ${DEFINITION_COLUMNS} FROM definitions WHERE template_id = $1 ORDER BY created_at, id`,
    [templateId],
  );
  return found.rows;
}

/** Inserts a template (without definitions). */
export async function insertTemplate(
  db: Queryable,
  template: { id: string; appId: string; name: string; createdByUserId: string | null },
): Promise<TemplateRow> {
  const inserted = await db.query<TemplateRow>(
    `INSERT INTO templates (id, app_id, name, created_by_user_id) VALUES ($1, $2, $3, $4)
     RETURNING id, app_id, name, created_at`,
    [template.id, template.appId, template.name, template.createdByUserId],
  );
  return inserted.rows[0] as TemplateRow;
}
