import { type AppError, notFound, validationError } from "@evalp/kit";
import { appendEntries, findEntry, type NewEntry } from "../db/entries.js";
import { saveInterview } from "../db/interviews.js";
import type { EntryRow } from "../db/rows.js";
import { requireInProgress } from "../flow/statuses.js";
import { questionIdProblem } from "../rpc/submit-answer.js";
import type { Step } from "../steps.js";

/** A command as the gateway validated it: `{type, id, …}` (docs/interview.md#the-agent-protocol). */
export type Command = { type: string; id: string } & Record<string, unknown>;

/** What a command did: the entry it wrote (or returned again), if any. */
export type Handler = (step: Step, command: Command) => Promise<EntryRow | null>;

/** Commands that change the interview need it in progress (consented, not over). */
export function inProgress(step: Step) {
  requireInProgress(step.interview.status, step.interview.consented_at !== null);
}

/** A 422 `value_error` at one body field, in the Pydantic shape the gateway renders. */
export function fieldProblem(field: string, input: unknown, reason: string): AppError {
  const error = `${JSON.stringify(input)} ${reason}`;
  return validationError([
    { loc: ["body", field], type: "value_error", msg: `Value error, ${error}`, input, ctx: { error } },
  ]);
}

/** A question the command may name: one of the interview, not skipped now. */
export function questionOf(step: Step, questionId: string, field = "question_id") {
  const placed = step.flow.find(questionId);
  if (!placed) {
    if (field === "question_id") throw questionIdProblem(questionId, "is not a question of this interview");
    throw fieldProblem(field, questionId, "is not a question of this interview");
  }
  return placed;
}

/**
 * An entry of this interview. docs/interview.md#the-agent-protocol: another interview's resources answer 404, and so does
 * an id that names nothing (the two must not be told apart).
 */
export async function entryById(step: Step, entryId: string): Promise<EntryRow> {
  const entry = await findEntry(step.tx, step.interview.id, entryId);
  if (!entry) throw notFound("entry", { entry_id: entryId });
  return entry;
}

/** Writes one entry and saves the interview (a new revision when `changes` the snapshot). */
export async function writeEntry(step: Step, entry: NewEntry, changes: boolean) {
  const [written] = await appendEntries(step.tx, step.interview, [entry], step.now);
  if (changes) step.interview.revision += 1;
  await saveInterview(step.tx, step.interview, step.now);
  return written ?? null;
}

/** The question's attempt so far: its answers and the proposals the participant rejected. */
export function attemptOf(step: Step, questionId: string): number {
  const { interview } = step;
  return (interview.answers[questionId]?.attempts ?? 0) + (interview.agent.rejections?.[questionId] ?? 0);
}
