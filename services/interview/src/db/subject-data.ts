import type { Queryable } from "@evalp/kit";
import { EVALUATION_COLUMNS, type EvaluationRow, INTERVIEW_COLUMNS, type InterviewRow } from "./rows.js";

/**
 * What the interview plane keeps about a subject, table by table (docs/subjects.md): how each
 * table is erased, and how it is exported, both from the ids (`$1`, uuid[]) of the subject's
 * evaluations or of their interviews (`by`). Erasure and export walk this one list, so a table added
 * here is erased and exported with the rest. Listed children first: erasing runs in this order.
 */
export type SubjectTable = {
  /** The export document's key for this table's rows. */
  name: string;
  /** Whose ids `$1` holds. */
  by: "evaluation" | "interview";
  /** Removes (or strips of personal data) what the table holds about the subject. */
  erase: string;
  /** The rows as exported, each one JSON object (`row`), in a stable order. */
  export: string;
};

export const SUBJECT_TABLES: readonly SubjectTable[] = [
  {
    // A scoring not yet done would score what is erased below: there is no verdict to keep.
    // Erased first: a scorer holding the job is waited for, so its result is erased below.
    name: "scoring_jobs",
    by: "evaluation",
    erase: "DELETE FROM scoring_jobs WHERE evaluation_id = ANY($1)",
    export: `SELECT to_jsonb(j) - 'last_error' AS row FROM scoring_jobs j WHERE j.evaluation_id = ANY($1)
             ORDER BY j.created_at, j.evaluation_id`,
  },
  {
    // The verdicts keep their numbers (the report: axes, scores, bands, the template's layout,
    // the subject's id); the inputs they were scored on (answers, the subject's external id and
    // profile, signals) and the trace (which holds those values) are dropped.
    name: "results",
    by: "evaluation",
    erase: `UPDATE evaluation_results SET inputs = '{}', trace = '{}'
            WHERE evaluation_id = ANY($1) AND (inputs <> '{}' OR trace <> '{}')`,
    export: `SELECT to_jsonb(r) AS row FROM evaluation_results r WHERE r.evaluation_id = ANY($1)
             ORDER BY r.scored_at, r.id`,
  },
  {
    name: "agent_connections",
    by: "interview",
    erase: "DELETE FROM agent_connections WHERE interview_id = ANY($1)",
    export: `SELECT to_jsonb(c) AS row FROM agent_connections c WHERE c.interview_id = ANY($1)
             ORDER BY c.opened_at, c.id`,
  },
  {
    name: "agent_commands",
    by: "interview",
    erase: "DELETE FROM agent_commands WHERE interview_id = ANY($1)",
    export: `SELECT jsonb_build_object('interview_id', a.interview_id, 'command_id', a.command_id, 'type', a.type,
               'received_at', a.received_at, 'acked_at', a.acked_at, 'error', a.error) AS row
             FROM agent_commands a WHERE a.interview_id = ANY($1) ORDER BY a.received_at, a.command_id`,
  },
  {
    name: "agent_sessions",
    by: "interview",
    erase: "DELETE FROM agent_sessions WHERE interview_id = ANY($1)",
    export: `SELECT to_jsonb(s) AS row FROM agent_sessions s WHERE s.interview_id = ANY($1)
             ORDER BY s.created_at, s.id`,
  },
  {
    name: "entries",
    by: "interview",
    erase: "DELETE FROM interview_entries WHERE interview_id = ANY($1)",
    export: `SELECT to_jsonb(e) AS row FROM interview_entries e WHERE e.interview_id = ANY($1)
             ORDER BY e.interview_id, e.seq`,
  },
  {
    name: "behavioral_events",
    by: "evaluation",
    erase: "DELETE FROM behavioral_events WHERE evaluation_id = ANY($1)",
    export: `SELECT to_jsonb(b) AS row FROM behavioral_events b WHERE b.evaluation_id = ANY($1)
             ORDER BY b.evaluation_id, b.created_at, b.id`,
  },
  {
    name: "behavioral_event_batches",
    by: "evaluation",
    erase: "DELETE FROM behavioral_event_batches WHERE evaluation_id = ANY($1)",
    export: `SELECT to_jsonb(b) AS row FROM behavioral_event_batches b WHERE b.evaluation_id = ANY($1)
             ORDER BY b.created_at, b.id`,
  },
  {
    name: "participant_sessions",
    by: "evaluation",
    erase: "DELETE FROM participant_sessions WHERE evaluation_id = ANY($1)",
    export: `SELECT to_jsonb(p) AS row FROM participant_sessions p WHERE p.evaluation_id = ANY($1)
             ORDER BY p.created_at, p.id`,
  },
  {
    // The interview stays, ended, with its ids, status and times; what was said is gone.
    name: "interviews",
    by: "interview",
    erase: `UPDATE interviews SET answers = '{}', agent = '{}', current_question_id = NULL, paused_reason = NULL
            WHERE id = ANY($1)`,
    export: `SELECT to_jsonb(i) - 'components' AS row FROM interviews i WHERE i.id = ANY($1)
             ORDER BY i.started_at, i.id`,
  },
];

/** The subject's evaluations (with their status) and the interviews they started, locked for the erasure. */
export async function subjectEvaluations(
  db: Queryable,
  environmentId: string,
  subjectId: string,
  lock = false,
): Promise<{ evaluations: EvaluationRow[]; interviews: InterviewRow[] }> {
  const evaluations = await db.query<EvaluationRow>(
    `SELECT ${EVALUATION_COLUMNS} FROM evaluations e LEFT JOIN interviews i ON i.evaluation_id = e.id
     WHERE e.environment_id = $1 AND e.subject_id = $2 ORDER BY e.created_at, e.id`,
    [environmentId, subjectId],
  );
  const ids = evaluations.rows.map((row) => row.id);
  const interviews = await db.query<InterviewRow>(
    `SELECT ${INTERVIEW_COLUMNS} FROM interviews WHERE evaluation_id = ANY($1) ORDER BY started_at, id
     ${lock ? "FOR UPDATE" : ""}`,
    [ids],
  );
  return { evaluations: evaluations.rows, interviews: interviews.rows };
}

/** Ends an interview still going on because its subject is erased (`ended_incomplete`, `subject_erased`). */
export async function endForErasure(db: Queryable, interviewId: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE interviews SET status = 'ended_incomplete', ended_reason = 'subject_erased', completed_at = $2,
       revision = revision + 1, last_activity_at = $2, agent_pause_at = NULL
     WHERE id = $1`,
    [interviewId, now],
  );
}
