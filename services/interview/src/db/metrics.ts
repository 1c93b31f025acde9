import { create } from "@bufbuild/protobuf";
import type { Queryable } from "@evalp/kit";
import { type Metrics, MetricsSchema } from "@evalp/proto/interview/v1/interview";
import { agentMetrics } from "../agent/metrics.js";

type CountRow = {
  attempts: number;
  corrections: number;
  clarifications: number;
  consistency_follow_ups: number;
  rejected_proposals: number;
  scenario_evidence: number;
  scenario_gaps: number;
  duration_seconds: number;
  turn_p50: number | null;
  turn_p95: number | null;
};

/**
 * The operator metrics of an interview, computed from all its entries (not one page of them) in
 * one query. `attempts` = answers recorded + corrected, `corrections` = corrected (docs/interview.md);
 * `clarifications` excludes the consistency follow-ups counted apart (docs/interview.md#the-agent-protocol); `duration_seconds`
 * runs from the start to completion (or the last activity while not completed). Turn latencies
 * pair a participant utterance's `ended_at` with the next utterance when it is the agent's, neither
 * interrupted, and are absent while there is no such pair.
 */
export async function interviewMetrics(db: Queryable, interviewId: string): Promise<Metrics> {
  const found = await db.query<CountRow>(
    `WITH entries AS (
       SELECT kind, payload, seq FROM interview_entries WHERE interview_id = $1
     ), utterances AS (
       SELECT payload->>'speaker' AS speaker, (payload->>'started_at')::timestamptz AS started_at,
              (payload->>'ended_at')::timestamptz AS ended_at,
              COALESCE((payload->>'interrupted')::boolean, false) AS interrupted, seq
       FROM entries WHERE kind = 'utterance'
     ), turns AS (
       SELECT speaker, ended_at, interrupted,
              lead(speaker) OVER (ORDER BY seq) AS next_speaker,
              lead(started_at) OVER (ORDER BY seq) AS next_started_at,
              lead(interrupted) OVER (ORDER BY seq) AS next_interrupted
       FROM utterances
     ), latencies AS (
       SELECT extract(epoch FROM next_started_at - ended_at) * 1000 AS ms FROM turns
       WHERE speaker = 'participant' AND next_speaker = 'agent' AND ended_at IS NOT NULL
         AND NOT interrupted AND NOT next_interrupted
     )
     SELECT
       (SELECT count(*) FROM entries WHERE kind IN ('answer_recorded', 'answer_corrected')) AS attempts,
       (SELECT count(*) FROM entries WHERE kind = 'answer_corrected') AS corrections,
       (SELECT count(*) FROM entries
         WHERE kind = 'clarification' AND COALESCE(payload->>'type', '') <> 'consistency') AS clarifications,
       (SELECT count(*) FROM entries
         WHERE kind = 'clarification' AND payload->>'type' = 'consistency') AS consistency_follow_ups,
       (SELECT count(*) FROM entries WHERE kind = 'proposal_rejected') AS rejected_proposals,
       (SELECT count(*) FROM entries WHERE kind = 'scenario_evidence') AS scenario_evidence,
       (SELECT count(*) FROM entries WHERE kind = 'scenario_gap') AS scenario_gaps,
       (SELECT floor(extract(epoch FROM COALESCE(completed_at, last_activity_at) - started_at))::bigint
         FROM interviews WHERE id = $1) AS duration_seconds,
       (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM latencies) AS turn_p50,
       (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) FROM latencies) AS turn_p95`,
    [interviewId],
  );
  const row = found.rows[0] as CountRow;
  const agent = await agentMetrics(db, interviewId);
  return create(MetricsSchema, {
    attempts: BigInt(row.attempts),
    clarifications: BigInt(row.clarifications),
    consistencyFollowUps: BigInt(row.consistency_follow_ups),
    corrections: BigInt(row.corrections),
    durationSeconds: BigInt(row.duration_seconds),
    rejectedProposals: BigInt(row.rejected_proposals),
    scenarioEvidence: BigInt(row.scenario_evidence),
    scenarioGaps: BigInt(row.scenario_gaps),
    providerErrors: agent.providerErrors,
    usage: agent.usage,
    apiLatencyP95Ms: agent.apiLatencyP95Ms,
    estimatedCostUsd: agent.estimatedCostUsd,
    turnLatencyP50Ms: row.turn_p50 ?? undefined,
    turnLatencyP95Ms: row.turn_p95 ?? undefined,
  });
}
