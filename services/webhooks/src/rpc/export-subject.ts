import { create } from "@bufbuild/protobuf";
import { exportSections, type Pool } from "@evalp/kit";
import {
  type ExportSubjectRequest,
  type ExportSubjectResponse,
  ExportSubjectResponseSchema,
} from "@evalp/proto/webhooks/v1/subject_export";
import { deliveryExportSections } from "../db/subject-data.js";

/** The webhooks plane's part of a subject export (docs/subjects.md#export): the deliveries of the events about the subject, streamed. */
export function exportSubject(deps: { pool: Pool }) {
  return async function* (req: ExportSubjectRequest): AsyncGenerator<ExportSubjectResponse> {
    for await (const piece of exportSections(
      deps.pool,
      deliveryExportSections(req.environmentId, req.subjectId),
    )) {
      yield create(ExportSubjectResponseSchema, piece);
    }
  };
}
