import { create, type JsonObject, toJson } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type AppError,
  auditRecord,
  eventEnvelope,
  eventMessage,
  lengthProblem,
  newId,
  outboxValues,
  type PoolClient,
  type RequestContext,
  requestContext,
  validationError,
  withTransaction,
} from "@evalp/kit";
import {
  type ImportSubjectsRequest,
  type ImportSubjectsResponse,
  ImportSubjectsResponseSchema,
  SubjectItemSchema,
  SubjectReceiptSchema,
} from "@evalp/proto/control/v1/subject";
import {
  IMPORT_MOST,
  type ImportState,
  type ImportWrite,
  importStateOf,
  importStateRead,
  lockSubjectCount,
  NOT_ADMITTED,
  readImportState,
  writeImport,
} from "../db/subject-import.js";
import type { Deps } from "../deps.js";

type Receipt = { itemIndex: number; subjectId: string; errorCode: string };

/**
 * Why a write not under the exclusive lock gives way to the locked attempt: the count no longer
 * admits it; a subject was created meanwhile with an external id it inserts (Postgres's unique
 * violation); or an import running beside it in the environment waited for it as it waited for
 * that one (a deadlock, Postgres aborting one of the two), which writes in a fixed order
 * (db/subject-import.ts) make rare but cannot rule out against every other writer of subjects.
 */
const GIVES_WAY = new Set([NOT_ADMITTED, "23505", "40P01"]);

/**
 * Upserts a batch by (environment, external_id): a known subject keeps its id and takes the new
 * profile; a new one counts against `active_subjects`. Each item gets a receipt; a later item
 * repeating an external_id of the batch is `duplicate_in_batch`, a creation past the limit
 * `quota_exceeded`. The subjects, the audit record and the `subject.imported` event are written
 * in one statement, under the environment's count locks for just that statement and its commit
 * (db/subject-import.ts): concurrent imports cannot together create more subjects than the limit,
 * and far from it they run side by side.
 * When another import changed what the plan was made from, the import runs again as a
 * transaction that takes the lock before it reads. Under an Idempotency-Key it runs without a
 * look-up of the key first (`recordsFirst`, server.ts): it does nothing a retry could notice
 * before its transaction, whose first statement records the key or finds it committed.
 */
export function importSubjects(deps: Deps) {
  return async (req: ImportSubjectsRequest, ctx: HandlerContext): Promise<ImportSubjectsResponse> => {
    // The gateway takes 1 to 100 items (the interface's limit); a caller that skips it is held
    // to the same, which the room an import leaves beside the environment's others counts on.
    if (req.items.length === 0 || req.items.length > IMPORT_MOST) throw itemsProblem(req.items);
    const context = requestContext(ctx.values);
    const batchId = newId();
    const externalIds = req.items.map((item) => item.externalId);
    // The answer is known once the plan is: it commits with the write (the request's stored
    // outcome), and is what the handler answers.
    const attempt = async (tx: PoolClient, state: ImportState): Promise<ImportSubjectsResponse> => {
      const plan = planImport(req, state);
      const answer = create(ImportSubjectsResponseSchema, {
        batchId,
        receipts: plan.receipts.map((receipt) => create(SubjectReceiptSchema, receipt)),
      });
      await writeImport(tx, importWrite(req, context, batchId, state, plan), answer);
      return answer;
    };
    // A transaction of its own (the read in BEGIN's round trip, the write with its commit): the
    // request's Idempotency-Key is recorded with the import it made (kit's withTransaction), so a
    // retry after a lost answer is given this import's receipts rather than importing again. One
    // not admitted rolls back, the key's record with it: the locked attempt below records it.
    const unlocked = await withTransaction(deps.pool, (tx, read) => attempt(tx, importStateOf(read)), {
      first: importStateRead(req.environment, externalIds),
    }).catch((error: unknown) => {
      if (GIVES_WAY.has((error as { code?: string }).code ?? "")) return null;
      throw error;
    });
    return (
      unlocked ??
      // Under the lock the count cannot rise between the read and the write (an erasure, which
      // takes no lock, only lowers it): it is admitted.
      (await withTransaction(deps.pool, async (tx) => {
        await lockSubjectCount(tx, req.environment?.environmentId ?? "");
        return attempt(tx, await readImportState(tx, req.environment, externalIds));
      }))
    );
  };
}

/** A 422 in the Pydantic shape (docs/errors.md), as the gateway renders the same refusal. */
function itemsProblem(items: ImportSubjectsRequest["items"]): AppError {
  const input = items.map((item) => toJson(SubjectItemSchema, item, { useProtoFieldName: true }));
  const [bound, limit] = items.length === 0 ? (["min", 1] as const) : (["max", IMPORT_MOST] as const);
  return validationError([{ loc: ["body", "items"], ...lengthProblem(bound, limit, input) }]);
}

type Plan = {
  receipts: Receipt[];
  updates: ImportWrite["updates"];
  inserts: ImportWrite["inserts"];
  refused: number;
};

/** Each item's fate, given the environment's state. */
function planImport(req: ImportSubjectsRequest, state: ImportState): Plan {
  let active = state.subjects;
  const seen = new Set<string>();
  const plan: Plan = { receipts: [], updates: [], inserts: [], refused: 0 };
  for (const [itemIndex, item] of req.items.entries()) {
    if (seen.has(item.externalId)) {
      plan.receipts.push({ itemIndex, subjectId: "", errorCode: "duplicate_in_batch" });
      continue;
    }
    seen.add(item.externalId);
    const profile: JsonObject = item.profile ?? {};
    const subjectId = state.known.get(item.externalId);
    if (subjectId) {
      plan.updates.push({ id: subjectId, profile, mode: item.identityMode });
      plan.receipts.push({ itemIndex, subjectId, errorCode: "" });
      continue;
    }
    if (active + 1 > state.limit) {
      plan.refused += 1;
      plan.receipts.push({ itemIndex, subjectId: "", errorCode: "quota_exceeded" });
      continue;
    }
    const id = newId();
    plan.inserts.push({ id, externalId: item.externalId, profile, mode: item.identityMode });
    active += 1;
    plan.receipts.push({ itemIndex, subjectId: id, errorCode: "" });
  }
  return plan;
}

/** The plan as written: its subjects, its audit record and its `subject.imported` event. */
function importWrite(
  req: ImportSubjectsRequest,
  context: RequestContext,
  batchId: string,
  state: ImportState,
  plan: Plan,
): ImportWrite {
  const environmentId = req.environment?.environmentId ?? "";
  const imported = plan.receipts.filter((receipt) => receipt.subjectId !== "");
  const summary = {
    batch_id: batchId,
    items: req.items.length,
    imported: imported.length,
    failed: plan.receipts.length - imported.length,
  };
  const event = eventEnvelope({
    type: "subject.imported",
    environmentId,
    data: { ...summary, subject_ids: imported.map((receipt) => receipt.subjectId) },
  });
  return {
    environmentId,
    planned: { subjects: state.subjects, limit: state.limit, refused: plan.refused },
    updates: plan.updates,
    inserts: plan.inserts,
    audit: auditRecord(context, {
      organizationId: req.environment?.organizationId ?? "",
      appId: req.environment?.appId,
      environmentId,
      action: "subjects.imported",
      resourceType: "subject_batch",
      resourceId: batchId,
      metadata: summary,
    }),
    event: outboxValues(eventMessage(event)),
  };
}
