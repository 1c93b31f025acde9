-- Up Migration
-- The subjects this plane erased (docs/subjects.md#erasure): ids only. A write that would add
-- data about a subject checks it, under the subject's advisory lock, so nothing about an erased
-- subject is stored after its erasure.
CREATE TABLE erased_subjects (
  subject_id uuid PRIMARY KEY,
  environment_id uuid NOT NULL,
  erased_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);

-- Down Migration
DROP TABLE erased_subjects;
