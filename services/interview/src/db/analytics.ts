import type { Queryable } from "@evalp/kit";

/** Interviews of the environment started in [starts_at, ends_at). */
const STARTED = `SELECT id, status, started_at, last_activity_at FROM interviews
  WHERE environment_id = $1 AND started_at >= $2 AND started_at < $3`;

export type TotalsRow = {
  started: number;
  completed: number;
  median_questions: number | null;
  median_active_ms: number | null;
};

export type QuestionRow = {
  question_id: string;
  asked: number;
  answered: number;
  corrections: number;
  median_answer_ms: number | null;
};

/** The window of an analytics summary: interviews of the environment started in [startsAt, endsAt). */
export type Window = { environmentId: string; startsAt: Date; endsAt: Date };

/** Interviews started and completed, and the medians of questions answered and of active time. */
export async function summaryTotals(db: Queryable, window: Window): Promise<TotalsRow> {
  const totals = await db.query<TotalsRow>(
    `WITH started AS (${STARTED}), per AS (
       SELECT s.status, extract(epoch FROM s.last_activity_at - s.started_at) * 1000 AS active_ms,
              (SELECT count(DISTINCT e.question_id) FROM interview_entries e
                WHERE e.interview_id = s.id AND e.kind IN ('answer_recorded', 'answer_corrected')) AS questions
       FROM started s
     )
     SELECT count(*) AS started, count(*) FILTER (WHERE status = 'completed') AS completed,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY questions) AS median_questions,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY active_ms) AS median_active_ms
     FROM per`,
    [window.environmentId, window.startsAt, window.endsAt],
  );
  return totals.rows[0] as TotalsRow;
}

/** Per question: interviews asked and answering it, corrections, the median time to the first answer. */
export async function questionMetrics(db: Queryable, window: Window): Promise<QuestionRow[]> {
  const found = await db.query<QuestionRow>(
    `WITH started AS (${STARTED}), per AS (
       SELECT e.interview_id, e.question_id,
              bool_or(e.kind = 'question_asked') AS asked,
              bool_or(e.kind IN ('answer_recorded', 'answer_corrected')) AS answered,
              count(*) FILTER (WHERE e.kind = 'answer_corrected') AS corrections,
              min(e.received_at) FILTER (WHERE e.kind = 'question_asked') AS first_asked,
              min(e.received_at) FILTER (WHERE e.kind = 'answer_recorded') AS first_answered
       FROM interview_entries e JOIN started s ON s.id = e.interview_id
       WHERE e.question_id IS NOT NULL
         AND e.kind IN ('question_asked', 'answer_recorded', 'answer_corrected')
       GROUP BY e.interview_id, e.question_id
     )
     SELECT question_id, count(*) FILTER (WHERE asked) AS asked,
            count(*) FILTER (WHERE answered) AS answered, sum(corrections)::bigint AS corrections,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM first_answered - first_asked) * 1000)
              FILTER (WHERE first_asked IS NOT NULL AND first_answered IS NOT NULL) AS median_answer_ms
     FROM per GROUP BY question_id ORDER BY question_id`,
    [window.environmentId, window.startsAt, window.endsAt],
  );
  return found.rows;
}

/** The score of one axis over the window's results, and the count of each band reached. */
export type AxisRow = {
  axis: string;
  label: string;
  scored: number;
  mean: number | null;
  median: number | null;
  bands: Array<{ band_id: string; band_label: string; count: number }>;
};

/**
 * Per axis (docs/results.md#scores-in-analytics), over the latest result of each evaluation whose
 * interview started in the window: how many scored it (a non-null score), the mean and median of
 * those scores, and how many fell in each band. The label is the latest result's.
 */
export async function axisMetrics(db: Queryable, window: Window): Promise<AxisRow[]> {
  const found = await db.query<AxisRow>(
    `WITH started AS (${STARTED}), latest AS (
       SELECT DISTINCT ON (r.evaluation_id) r.report, r.scored_at
       FROM evaluation_results r JOIN interviews i ON i.evaluation_id = r.evaluation_id
       JOIN started s ON s.id = i.id
       ORDER BY r.evaluation_id, r.scored_at DESC, r.id DESC
     ), axes AS (
       SELECT a->>'axis' AS axis, a->>'label' AS label, (a->>'score')::double precision AS score,
              a->>'band_id' AS band_id, a->>'band_label' AS band_label, latest.scored_at
       FROM latest, jsonb_array_elements(latest.report->'axes') AS a
     ), bands AS (
       SELECT axis, band_id, (array_agg(band_label ORDER BY scored_at DESC))[1] AS band_label, count(*) AS count
       FROM axes WHERE band_id IS NOT NULL GROUP BY axis, band_id
     )
     SELECT axis, (array_agg(label ORDER BY scored_at DESC))[1] AS label, count(score) AS scored,
            avg(score) AS mean, percentile_cont(0.5) WITHIN GROUP (ORDER BY score) AS median,
            COALESCE((SELECT json_agg(json_build_object('band_id', b.band_id, 'band_label', b.band_label,
                        'count', b.count) ORDER BY b.band_id) FROM bands b WHERE b.axis = axes.axis), '[]') AS bands
     FROM axes GROUP BY axis ORDER BY axis`,
    [window.environmentId, window.startsAt, window.endsAt],
  );
  return found.rows.map((row) => ({ ...row, scored: Number(row.scored) }));
}
