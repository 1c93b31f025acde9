import { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import { DateTime, FreeObject, named, ref, Uuid } from "../wire.js";
import { SubjectBody } from "./wire.js";

/** A piece of one plane's export stream: rows (each a JSON object's text) of one section. */
export type ExportPiece = { section: string; rows: readonly string[] };

/** A plane's sections, each a list of rows: their names are the plane's (docs/subjects.md#export). */
const Sections = (description: string) => Type.Record(Type.String(), Type.Array(FreeObject), { description });

/** The export document's name among the document's schemas. */
export const SUBJECT_EXPORT_ID = "SubjectExport";

export const SubjectExport = Type.Object(
  {
    subject_id: Uuid,
    exported_at: DateTime,
    subject: ref(SubjectBody),
    interview: Sections(
      "`evaluations`, `interviews`, `participant_sessions`, `behavioral_event_batches`, `behavioral_events`, `entries` (the transcript and everything else said or done in the interviews), `agent_sessions`, `agent_commands`, `agent_connections`.",
    ),
    platform: Sections("`continuous_answers`."),
    webhooks: Sections(
      "`webhook_deliveries`: the deliveries of the events that named the subject (ids, type, times, status; no payload).",
    ),
  },
  named(SUBJECT_EXPORT_ID, "Everything every plane keeps about a subject (docs/subjects.md#export)."),
);

/**
 * The export document, written as it is read: the subject, then each plane's sections as its
 * stream brings them (a plane's stream is opened once the one before it ended), so that no
 * process holds the whole document. A plane that fails midway ends the body there: the client
 * gets JSON that does not parse, never a document that looks complete.
 */
export function exportBody(
  subject: Record<string, unknown>,
  planes: ReadonlyArray<readonly [string, () => AsyncIterable<ExportPiece>]>,
  exportedAt = new Date(),
): Readable {
  return Readable.from(exportText(subject, planes, exportedAt));
}

export async function* exportText(
  subject: Record<string, unknown>,
  planes: ReadonlyArray<readonly [string, () => AsyncIterable<ExportPiece>]>,
  exportedAt: Date,
): AsyncGenerator<string> {
  yield `{"subject_id":${JSON.stringify(subject.id)},"exported_at":${JSON.stringify(exportedAt.toISOString())},"subject":${JSON.stringify(subject)}`;
  for (const [plane, open] of planes) {
    yield `,${JSON.stringify(plane)}:{`;
    let section: string | null = null;
    let empty = true;
    for await (const piece of open()) {
      if (piece.section !== section) {
        yield `${section === null ? "" : "],"}${JSON.stringify(piece.section)}:[`;
        section = piece.section;
        empty = true;
      }
      if (piece.rows.length === 0) continue;
      yield `${empty ? "" : ","}${piece.rows.join(",")}`;
      empty = false;
    }
    yield section === null ? "}" : "]}";
  }
  yield "}";
}
