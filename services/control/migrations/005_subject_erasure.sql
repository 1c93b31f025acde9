-- Up Migration
-- Subject erasure (docs/subjects.md#erasure). An erased subject stays as a tombstone: its id,
-- environment, identity mode and times remain, its external id becomes NULL (so a later import
-- of the same external id makes a new subject) and its profile `{}`. It no longer counts as an
-- active subject.
ALTER TABLE subjects ALTER COLUMN external_id DROP NOT NULL;
ALTER TABLE subjects ADD COLUMN erased_at timestamptz;

CREATE FUNCTION uncount_erased_subject() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE subject_counts SET subjects = subjects - 1 WHERE environment_id = NEW.environment_id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER subjects_uncounted_on_erasure AFTER UPDATE OF erased_at ON subjects
FOR EACH ROW WHEN (OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL)
EXECUTE FUNCTION uncount_erased_subject();

-- One erasure per subject: when it was asked, when each plane finished, and when the last did.
-- Control erases its own part in the request's transaction (`control_at` = `requested_at`).
CREATE TABLE subject_erasures (
  subject_id uuid PRIMARY KEY REFERENCES subjects (id),
  organization_id uuid NOT NULL,
  app_id uuid NOT NULL,
  environment_id uuid NOT NULL,
  requested_at timestamptz NOT NULL,
  control_at timestamptz NOT NULL,
  interview_at timestamptz,
  platform_at timestamptz,
  webhooks_at timestamptz,
  completed_at timestamptz
);

-- Down Migration
DROP TABLE subject_erasures;
DROP TRIGGER subjects_uncounted_on_erasure ON subjects;
DROP FUNCTION uncount_erased_subject();
DELETE FROM subjects WHERE erased_at IS NOT NULL;
ALTER TABLE subjects DROP COLUMN erased_at;
ALTER TABLE subjects ALTER COLUMN external_id SET NOT NULL;
