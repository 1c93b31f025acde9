import { newId, type Queryable } from "@evalp/kit";

/** A continuous answer's receipt: what a repeat of its request is answered with. */
export type AnswerRow = {
  id: string;
  client_answer_id: string;
  question_id: string;
  answer: unknown;
  delivery_id: string | null;
};

const ANSWER_COLUMNS = "id, client_answer_id, question_id, answer, delivery_id";

/** The key a client retries an answer by. */
export type AnswerKey = {
  environmentId: string;
  subjectId: string;
  programId: string;
  clientAnswerId: string;
};

/** Inserts a continuous answer; undefined when one with its key exists already. */
export async function insertAnswer(
  db: Queryable,
  key: AnswerKey,
  answer: { questionId: string; answer: unknown; answeredAt: Date | null; deliveryId: string | null },
): Promise<AnswerRow | undefined> {
  const inserted = await db.query<AnswerRow>(
    `INSERT INTO continuous_answers (id, environment_id, subject_id, program_id, client_answer_id, question_id, answer,
       answered_at, delivery_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (environment_id, subject_id, program_id, client_answer_id) DO NOTHING
     RETURNING ${ANSWER_COLUMNS}`,
    [
      newId(),
      key.environmentId,
      key.subjectId,
      key.programId,
      key.clientAnswerId,
      answer.questionId,
      answer.answer,
      answer.answeredAt,
      answer.deliveryId,
    ],
  );
  return inserted.rows[0];
}

/** The answer recorded under a key. */
export async function findAnswer(db: Queryable, key: AnswerKey): Promise<AnswerRow> {
  const existing = await db.query<AnswerRow>(
    `SELECT ${ANSWER_COLUMNS} FROM continuous_answers
     WHERE environment_id = $1 AND subject_id = $2 AND program_id = $3 AND client_answer_id = $4`,
    [key.environmentId, key.subjectId, key.programId, key.clientAnswerId],
  );
  return existing.rows[0] as AnswerRow;
}
