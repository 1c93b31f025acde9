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
import { importState } from "../db/quotas.js";
import { requireEnvironment } from "../db/scope.js";
import { writeSubjects } from "../db/subject-rows.js";
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
      const current = await importState(tx, environmentId, externalIds);
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
      await writeSubjects(tx, environmentId, updates, inserts);
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
