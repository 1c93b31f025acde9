import {
  type ErasureOrder,
  lockSubjectData,
  recordErasedSubject,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import { endForErasure, SUBJECT_TABLES, subjectEvaluations } from "./db/subject-data.js";
import type { Deps } from "./deps.js";
import { eventBase } from "./steps.js";

/** Statuses of an interview still going on: erasing its subject ends it first. */
const GOING_ON = new Set(["active", "paused"]);

/**
 * The interview plane's part of a subject's erasure (docs/subjects.md#erasure), in one
 * transaction: an interview still going on is ended (`ended_incomplete`, `ended_reason`
 * `subject_erased`, with its `interview.completed` event), then every table of SUBJECT_TABLES
 * is erased. After the commit, the sockets of the subject's interviews are closed, whichever
 * gateway holds them. Running it again finds nothing left to erase.
 */
export function eraseSubjectData(deps: Pick<Deps, "pool" | "realtime">) {
  return async (order: ErasureOrder): Promise<void> => {
    const touched = await withTransaction(deps.pool, async (tx) => {
      // A new evaluation of the subject either committed before this (and is erased below) or waits and is refused.
      await lockSubjectData(tx, order.subjectId);
      await recordErasedSubject(tx, order.environmentId, order.subjectId);
      const { evaluations, interviews } = await subjectEvaluations(
        tx,
        order.environmentId,
        order.subjectId,
        true,
      );
      const now = new Date();
      for (const interview of interviews) {
        const evaluation = evaluations.find((row) => row.id === interview.evaluation_id);
        if (!evaluation || !GOING_ON.has(interview.status)) continue;
        await endForErasure(tx, interview.id, now);
        await writeOutboxEvent(tx, {
          type: "interview.completed",
          environmentId: interview.environment_id,
          data: {
            ...eventBase(evaluation, interview),
            status: "ended_incomplete",
            ended_reason: "subject_erased",
            completed_at: now.toISOString(),
          },
        });
      }
      const ids = {
        evaluation: evaluations.map((row) => row.id),
        interview: interviews.map((row) => row.id),
      };
      for (const table of SUBJECT_TABLES) await tx.query(table.erase, [ids[table.by]]);
      return interviews.map((row) => row.evaluation_id);
    });
    for (const evaluationId of touched) {
      deps.realtime.closed(evaluationId, "subject_erased", "The subject of this interview was erased.");
    }
  };
}
