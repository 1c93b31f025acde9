import { newId, type Queryable } from "@evalp/kit";
import { ENTRY_COLUMNS, type EntryRow, type InterviewRow } from "./rows.js";

/** Entry kinds (docs/interview.md#entries), the agent side's included. */
export type EntryKind =
  | "consent"
  | "question_asked"
  | "answer_recorded"
  | "answer_corrected"
  | "clarification"
  | "utterance"
  | "proposal"
  | "proposal_rejected"
  | "status_changed"
  | "scenario_follow_up"
  | "scenario_evidence"
  | "scenario_gap"
  | "agent_report";

export type Actor = "participant" | "agent" | "system" | "operator";

export type NewEntry = {
  kind: EntryKind;
  actor: Actor;
  attempt?: number;
  /** When it happened as the client says (an utterance's `started_at`); else when it was received. */
  occurredAt?: Date;
  payload?: Record<string, unknown>;
  questionId?: string;
  sectionId?: string;
  refEntryId?: string;
  scenarioId?: string;
};

/**
 * Appends entries to an interview, numbering them from its counter. The caller holds the
 * interview row FOR UPDATE in `tx` and saves it afterwards (with the new `last_seq`), so two
 * steps can never take the same numbers and a rolled back step leaves no gap.
 */
export async function appendEntries(
  tx: Queryable,
  interview: InterviewRow,
  entries: NewEntry[],
  now: Date,
): Promise<EntryRow[]> {
  if (entries.length === 0) return [];
  const values: unknown[] = [];
  const rows = entries.map((entry, i) => {
    const base = i * 13;
    values.push(
      newId(),
      interview.id,
      interview.last_seq + i + 1,
      entry.kind,
      entry.actor,
      entry.attempt ?? 0,
      entry.occurredAt ?? now,
      now,
      JSON.stringify(entry.payload ?? {}),
      entry.questionId ?? null,
      entry.refEntryId ?? null,
      entry.sectionId ?? null,
      entry.scenarioId ?? null,
    );
    return `(${Array.from({ length: 13 }, (_, k) => `$${base + k + 1}`).join(", ")})`;
  });
  const inserted = await tx.query<EntryRow>(
    `INSERT INTO interview_entries (id, interview_id, seq, kind, actor, attempt, occurred_at, received_at, payload,
       question_id, ref_entry_id, section_id, scenario_id)
     VALUES ${rows.join(", ")} RETURNING ${ENTRY_COLUMNS}`,
    values,
  );
  interview.last_seq += entries.length;
  return inserted.rows.sort((a, b) => a.seq - b.seq);
}

/** Entries of an interview after `afterSeq`, ascending, at most `limit` (of the given kinds). */
export async function listEntries(
  db: Queryable,
  interviewId: string,
  afterSeq: number,
  limit: number,
  kinds?: string[],
): Promise<EntryRow[]> {
  const found = await db.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM interview_entries
     WHERE interview_id = $1 AND seq > $2 AND ($4::text[] IS NULL OR kind = ANY($4))
     ORDER BY seq LIMIT $3`,
    [interviewId, afterSeq, limit, kinds ?? null],
  );
  return found.rows;
}

/** The entry `entryId` of the interview, if it is one of its entries. */
export async function findEntry(
  db: Queryable,
  interviewId: string,
  entryId: string,
): Promise<EntryRow | null> {
  const found = await db.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM interview_entries WHERE interview_id = $1 AND id = $2`,
    [interviewId, entryId],
  );
  return found.rows[0] ?? null;
}

/** The payloads of the interview's `agent_report` entries, in order. */
export async function agentReportPayloads<T>(db: Queryable, interviewId: string): Promise<T[]> {
  const reports = await db.query<{ payload: T }>(
    "SELECT payload FROM interview_entries WHERE interview_id = $1 AND kind = 'agent_report' ORDER BY seq",
    [interviewId],
  );
  return reports.rows.map((row) => row.payload);
}
