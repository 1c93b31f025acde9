-- Up Migration
-- Subject counts in shards, after the two releases (docs/decisions.md "Subject counts in
-- shards"): the per-environment row the first of them still locked is dropped, with the function
-- that locked it.
-- contract: nothing reads or writes `subject_counts`, or calls `locked_subject_count`, since
-- release 009's code (the shards and `counted_subjects` only); migration 009 stopped keeping the
-- row. Only 008's code called them, and a release is rolled out completely before the next.
DROP FUNCTION locked_subject_count(uuid);
DROP TABLE subject_counts;

-- Down Migration
-- The row again, from the shards, with the function 008's code calls; its triggers stay dropped
-- (009's down section makes them again).
CREATE TABLE subject_counts (
  environment_id uuid PRIMARY KEY REFERENCES environments (id),
  subjects bigint NOT NULL CHECK (subjects >= 0)
);
INSERT INTO subject_counts (environment_id, subjects)
SELECT environment_id, sum(subjects) FROM subject_count_shards GROUP BY environment_id;
CREATE FUNCTION locked_subject_count(environment uuid) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  counted bigint;
BEGIN
  PERFORM FROM subject_counts WHERE environment_id = environment FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('subject_count:' || environment::text, 0));
  SELECT COALESCE(sum(subjects), 0) INTO counted FROM subject_count_shards WHERE environment_id = environment;
  RETURN counted;
END;
$$;
