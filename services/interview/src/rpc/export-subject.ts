import { create } from "@bufbuild/protobuf";
import { type ExportSection, exportSections } from "@evalp/kit";
import {
  type ExportSubjectRequest,
  type ExportSubjectResponse,
  ExportSubjectResponseSchema,
} from "@evalp/proto/interview/v1/subject_export";
import { SUBJECT_TABLES, subjectEvaluations } from "../db/subject-data.js";
import type { Deps } from "../deps.js";

/**
 * The interview plane's part of a subject export (docs/subjects.md#export): the subject's
 * evaluations, then every table of SUBJECT_TABLES (interviews first, then what hangs from them),
 * streamed a few hundred rows at a time.
 */
export function exportSubject(deps: Pick<Deps, "pool">) {
  return async function* (req: ExportSubjectRequest): AsyncGenerator<ExportSubjectResponse> {
    const { evaluations, interviews } = await subjectEvaluations(deps.pool, req.environmentId, req.subjectId);
    const ids = { evaluation: evaluations.map((row) => row.id), interview: interviews.map((row) => row.id) };
    const sections: ExportSection[] = [
      {
        name: "evaluations",
        sql: `SELECT to_jsonb(e) || jsonb_build_object('status', COALESCE(i.status, 'pending')) AS row
              FROM evaluations e LEFT JOIN interviews i ON i.evaluation_id = e.id
              WHERE e.id = ANY($1) ORDER BY e.created_at, e.id`,
        params: [ids.evaluation],
      },
      ...[...SUBJECT_TABLES].reverse().map((table) => ({
        name: table.name,
        sql: table.export,
        params: [ids[table.by]],
      })),
    ];
    for await (const piece of exportSections(deps.pool, sections)) {
      yield create(ExportSubjectResponseSchema, piece);
    }
  };
}
