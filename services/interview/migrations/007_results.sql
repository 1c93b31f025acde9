-- Up Migration
-- The verdicts (docs/results.md). An interview that ends leaves a scoring job in the same
-- transaction; any interview replica claims it (FOR UPDATE SKIP LOCKED, held while it scores, so a
-- replica that dies gives it back at once) and deletes it with the result it stores.
CREATE TABLE scoring_jobs (
  evaluation_id uuid PRIMARY KEY REFERENCES evaluations (id) ON DELETE CASCADE,
  environment_id uuid NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  not_before timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX scoring_jobs_due ON scoring_jobs (not_before);

-- A result is immutable. `trigger` is `end` for the scoring when the interview ended and
-- `rescore:<id>` for each rescore: one stored result per (evaluation, trigger), whichever replica
-- scored it and however often. `inputs` keeps the answers, context and signals it was scored on,
-- so that a rescore scores the same ones.
CREATE TABLE evaluation_results (
  id uuid PRIMARY KEY,
  evaluation_id uuid NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
  environment_id uuid NOT NULL,
  trigger text NOT NULL,
  subject_id uuid NOT NULL,
  bundle_id uuid NOT NULL,
  fingerprint text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('completed', 'ended_incomplete')),
  inputs jsonb NOT NULL,
  report jsonb NOT NULL,
  trace jsonb NOT NULL,
  scored_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  UNIQUE (evaluation_id, trigger)
);
CREATE INDEX evaluation_results_evaluation ON evaluation_results (evaluation_id, scored_at, id);
CREATE INDEX evaluation_results_scored ON evaluation_results (environment_id, scored_at);

-- When each evaluation was last scored (the list's index is 008_results_page.sql).
ALTER TABLE evaluations ADD COLUMN scored_at timestamptz;

-- Down Migration
ALTER TABLE evaluations DROP COLUMN scored_at;
DROP TABLE evaluation_results;
DROP TABLE scoring_jobs;
