import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { newId, notFound, requestContext, withTransaction, writeOutboxEvent } from "@evalp/kit";
import {
  type ImportSubjectsRequest,
  type ImportSubjectsResponse,
  ImportSubjectsResponseSchema,
  SubjectReceiptSchema,
} from "@evalp/proto/control/v1/subject";
import { writeAudit } from "../db/audit.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

type Receipt = { itemIndex: number; subjectId: string; errorCode: string };

/**
 * Upserts a batch by (environment, external_id): a known subject keeps its id and takes the new
 * profile; a new one counts against `active_subjects`. Each item gets a receipt; a later item
 * repeating an external_id of the batch is `duplicate_in_batch`, a creation past the limit
 * `quota_exceeded`. The `active_subjects` counter is locked for the batch, so concurrent imports
 * cannot together create more subjects than the limit.
 */
export function importSubjects(deps: Deps) {
  return async (req: ImportSubjectsRequest, ctx: HandlerContext): Promise<ImportSubjectsResponse> => {
    const context = requestContext(ctx.values);
    const environmentId = req.environment?.environmentId ?? "";
    const batchId = newId();
    const receipts = await withTransaction(deps.pool, async (tx) => {
      await requireEnvironment(tx, req.environment, "active_subjects");
      const externalIds = req.items.map((item) => item.externalId);
      const state = await tx.query<{ limit: number; subjects: string; known: Record<string, string> }>(
        `SELECT q.active_subjects AS limit, COALESCE(c.subjects, 0) AS subjects,
                COALESCE((SELECT json_object_agg(external_id, id) FROM subjects
                          WHERE environment_id = $1 AND external_id = ANY($2)), '{}') AS known
         FROM quotas q LEFT JOIN subject_counts c ON c.environment_id = q.environment_id
         WHERE q.environment_id = $1`,
        [environmentId, externalIds],
      );
      const current = state.rows[0];
      if (!current) throw notFound("environment");
      const existing = new Map(Object.entries(current.known));
      let active = Number(current.subjects);
      const seen = new Set<string>();
      const out: Receipt[] = [];
      const updates: { id: string; profile: JsonObject; mode: string }[] = [];
      const inserts: { id: string; externalId: string; profile: JsonObject; mode: string }[] = [];
      for (const [itemIndex, item] of req.items.entries()) {
        if (seen.has(item.externalId)) {
          out.push({ itemIndex, subjectId: "", errorCode: "duplicate_in_batch" });
          continue;
        }
        seen.add(item.externalId);
        const profile: JsonObject = item.profile ?? {};
        const subjectId = existing.get(item.externalId);
        if (subjectId) {
          updates.push({ id: subjectId, profile, mode: item.identityMode });
          out.push({ itemIndex, subjectId, errorCode: "" });
          continue;
        }
        if (active + 1 > current.limit) {
          out.push({ itemIndex, subjectId: "", errorCode: "quota_exceeded" });
          continue;
        }
        const id = newId();
        inserts.push({ id, externalId: item.externalId, profile, mode: item.identityMode });
        active += 1;
        out.push({ itemIndex, subjectId: id, errorCode: "" });
      }
      // The whole batch in one statement, however many items it holds.
      await tx.query(
        `WITH updated AS (
           UPDATE subjects s
           SET profile = u.profile, identity_mode = u.mode,
               updated_at = date_trunc('milliseconds', clock_timestamp())
           FROM unnest($1::uuid[], $2::jsonb[], $3::text[]) AS u (id, profile, mode)
           WHERE s.id = u.id
           RETURNING 1
         ), inserted AS (
           INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
           SELECT i.id, $4, i.external_id, i.mode, i.profile
           FROM unnest($5::uuid[], $6::text[], $7::text[], $8::jsonb[]) AS i (id, external_id, mode, profile)
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM updated) + (SELECT count(*) FROM inserted) AS written`,
        [
          updates.map((u) => u.id),
          updates.map((u) => JSON.stringify(u.profile)),
          updates.map((u) => u.mode),
          environmentId,
          inserts.map((i) => i.id),
          inserts.map((i) => i.externalId),
          inserts.map((i) => i.mode),
          inserts.map((i) => JSON.stringify(i.profile)),
        ],
      );
      const imported = out.filter((receipt) => receipt.subjectId !== "");
      const summary = {
        batch_id: batchId,
        items: req.items.length,
        imported: imported.length,
        failed: out.length - imported.length,
      };
      await writeAudit(tx, context, {
        organizationId: req.environment?.organizationId ?? "",
        appId: req.environment?.appId,
        environmentId,
        action: "subjects.imported",
        resourceType: "subject_batch",
        resourceId: batchId,
        metadata: summary,
      });
      await writeOutboxEvent(tx, {
        type: "subject.imported",
        environmentId,
        data: { ...summary, subject_ids: imported.map((receipt) => receipt.subjectId) },
      });
      return out;
    });
    return create(ImportSubjectsResponseSchema, {
      batchId,
      receipts: receipts.map((receipt) => create(SubjectReceiptSchema, receipt)),
    });
  };
}
