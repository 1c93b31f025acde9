import { create } from "@bufbuild/protobuf";
import { exportSections, type Pool } from "@evalp/kit";
import {
  type ExportSubjectRequest,
  type ExportSubjectResponse,
  ExportSubjectResponseSchema,
} from "@evalp/proto/platform/v1/subject_export";
import { answerExportSections } from "../db/subject-data.js";

/** The platform plane's part of a subject export (docs/subjects.md#export): its continuous answers, streamed. */
export function exportSubject(deps: { pool: Pool }) {
  return async function* (req: ExportSubjectRequest): AsyncGenerator<ExportSubjectResponse> {
    for await (const piece of exportSections(
      deps.pool,
      answerExportSections(req.environmentId, req.subjectId),
    )) {
      yield create(ExportSubjectResponseSchema, piece);
    }
  };
}
