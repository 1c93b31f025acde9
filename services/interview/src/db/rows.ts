import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Evaluation, EvaluationSchema } from "@evalp/proto/interview/v1/evaluation";
import {
  type Entry,
  EntrySchema,
  type TranscriptEntry,
  TranscriptEntrySchema,
} from "@evalp/proto/interview/v1/interview";
import type { AgentState } from "../flow/agent-state.js";
import type { AnswerMap, Components } from "../flow/flow.js";
import type { OperatorStatus } from "../flow/statuses.js";

export type EvaluationRow = {
  id: string;
  organization_id: string;
  app_id: string;
  environment_id: string;
  subject_id: string;
  bundle_id: string;
  program_id: string | null;
  created_at: Date;
  /** `pending` until the participant starts, then the interview's operator status. */
  status: string;
};

/** The evaluation's columns, with its status read from its interview (`e` and `i` aliases). */
export const EVALUATION_COLUMNS = `e.id, e.organization_id, e.app_id, e.environment_id, e.subject_id, e.bundle_id,
  e.program_id, e.created_at, COALESCE(i.status, 'pending') AS status`;

export type InterviewRow = {
  id: string;
  evaluation_id: string;
  environment_id: string;
  bundle_id: string;
  config_fingerprint: string;
  components: Components;
  status: OperatorStatus;
  consented_at: Date | null;
  answers: AnswerMap;
  current_question_id: string | null;
  revision: number;
  last_seq: number;
  started_at: Date;
  last_activity_at: Date;
  completed_at: Date | null;
  ended_reason: string | null;
  paused_reason: string | null;
  agent: AgentState;
};

export const INTERVIEW_COLUMNS = `id, evaluation_id, environment_id, bundle_id, config_fingerprint, components, status,
  consented_at, answers, current_question_id, revision, last_seq, started_at, last_activity_at, completed_at,
  ended_reason, paused_reason, agent`;

export type EntryRow = {
  id: string;
  seq: number;
  kind: string;
  actor: string;
  attempt: number;
  occurred_at: Date;
  received_at: Date;
  payload: Record<string, unknown>;
  question_id: string | null;
  ref_entry_id: string | null;
  scenario_id: string | null;
  section_id: string | null;
};

export const ENTRY_COLUMNS = `id, seq, kind, actor, attempt, occurred_at, received_at, payload, question_id,
  ref_entry_id, scenario_id, section_id`;

/** Entry kinds the participant's transcript shows (docs/interview.md): questions, answers, utterances. */
export const TRANSCRIPT_KINDS = ["question_asked", "answer_recorded", "answer_corrected", "utterance"];

export function evaluationMessage(row: EvaluationRow): Evaluation {
  return create(EvaluationSchema, {
    id: row.id,
    environmentId: row.environment_id,
    subjectId: row.subject_id,
    bundleId: row.bundle_id,
    programId: row.program_id ?? undefined,
    status: row.status,
    createdAt: timestampFromDate(row.created_at),
  });
}

export function entryMessage(row: EntryRow): Entry {
  return create(EntrySchema, {
    id: row.id,
    seq: BigInt(row.seq),
    kind: row.kind,
    actor: row.actor,
    attempt: row.attempt,
    occurredAt: timestampFromDate(row.occurred_at),
    receivedAt: timestampFromDate(row.received_at),
    payload: row.payload as JsonObject,
    questionId: row.question_id ?? undefined,
    refEntryId: row.ref_entry_id ?? undefined,
    scenarioId: row.scenario_id ?? undefined,
    sectionId: row.section_id ?? undefined,
  });
}

/**
 * An entry as the transcript shows it. Every transcript entry's payload carries `speaker`,
 * `modality` and `text`; utterances also their own `started_at`, `ended_at` and `interrupted`.
 */
export function transcriptMessage(row: EntryRow): TranscriptEntry {
  const payload = row.payload;
  const startedAt = typeof payload.started_at === "string" ? new Date(payload.started_at) : row.occurred_at;
  return create(TranscriptEntrySchema, {
    entryId: row.id,
    seq: BigInt(row.seq),
    speaker: String(payload.speaker),
    modality: String(payload.modality),
    text: String(payload.text),
    startedAt: timestampFromDate(startedAt),
    endedAt: typeof payload.ended_at === "string" ? timestampFromDate(new Date(payload.ended_at)) : undefined,
    interrupted: payload.interrupted === true,
  });
}
