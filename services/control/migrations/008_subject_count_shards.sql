-- Up Migration
-- Subjects per environment in 8 shards, kept by triggers beside `subject_counts` (which the
-- triggers of migrations 003 and 005 keep as before). Each statement that inserts or deletes
-- subjects, and each erasure, adds to one shard: the one its backend's id picks, so that writers
-- on different backends change different rows. The environment's count is the shards' sum; a
-- shard alone may go below zero (a subject counted in one shard and deleted through another).
--
-- The first of two releases (expand, then use; docs/decisions.md "Subject counts in shards"):
-- this one's imports take `subject_counts`' row, as the previous release's do, and the
-- environment's count lock exclusively, which the next release's imports far from the limit
-- hold shared; then they count the shards (`locked_subject_count`).
CREATE TABLE subject_count_shards (
  environment_id uuid NOT NULL REFERENCES environments (id),
  shard smallint NOT NULL CHECK (shard BETWEEN 0 AND 7),
  subjects bigint NOT NULL,
  PRIMARY KEY (environment_id, shard)
);

-- `counted` is the statement's inserted or deleted rows (a transition table). Environments in
-- id order, so two statements over several environments take their shards in one order.
CREATE FUNCTION count_subjects_in_shard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO subject_count_shards (environment_id, shard, subjects)
  SELECT environment_id, pg_backend_pid() % 8,
         CASE WHEN TG_OP = 'INSERT' THEN count(*) ELSE -count(*) END
  FROM counted GROUP BY environment_id ORDER BY environment_id
  ON CONFLICT (environment_id, shard)
  DO UPDATE SET subjects = subject_count_shards.subjects + EXCLUDED.subjects;
  RETURN NULL;
END;
$$;

-- The triggers first: once one exists, no statement can write subjects until this migration
-- commits, and every one that did has committed, so the copy below counts each subject once.
CREATE TRIGGER subjects_counted_in_shards AFTER INSERT ON subjects
REFERENCING NEW TABLE AS counted FOR EACH STATEMENT EXECUTE FUNCTION count_subjects_in_shard();
CREATE TRIGGER subjects_uncounted_in_shards AFTER DELETE ON subjects
REFERENCING OLD TABLE AS counted FOR EACH STATEMENT EXECUTE FUNCTION count_subjects_in_shard();

-- An erasure uncounts its subject (as `subjects_uncounted_on_erasure` does in `subject_counts`,
-- and after it: row triggers of one event fire in name order). A row trigger: a statement trigger
-- with transition tables cannot name the column, and would run on every update of an import.
CREATE FUNCTION uncount_erased_subject_in_shard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO subject_count_shards (environment_id, shard, subjects)
  VALUES (NEW.environment_id, pg_backend_pid() % 8, -1)
  ON CONFLICT (environment_id, shard) DO UPDATE SET subjects = subject_count_shards.subjects - 1;
  RETURN NULL;
END;
$$;

CREATE TRIGGER subjects_uncounted_on_erasure_in_shard AFTER UPDATE OF erased_at ON subjects
FOR EACH ROW WHEN (OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL)
EXECUTE FUNCTION uncount_erased_subject_in_shard();

INSERT INTO subject_count_shards (environment_id, shard, subjects)
SELECT environment_id, 0, subjects FROM subject_counts;

-- An import's count, under the locks that keep it exact: `subject_counts`' row (the previous
-- release's imports lock it first, and their triggers write it), then the environment's count
-- lock, an advisory lock held exclusively here (the next release's imports far from the limit
-- hold it shared, beside a lock of their own shard). VOLATILE, so in READ COMMITTED the sum is
-- read in a snapshot taken after both locks are held: every import that held either has
-- committed and is counted, whatever the calling statement's snapshot. NULL, taking no lock,
-- when the environment has no row yet (its first import makes it: src/db/subject-import.ts).
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

-- Down Migration
DROP FUNCTION locked_subject_count(uuid);
DROP TRIGGER subjects_uncounted_on_erasure_in_shard ON subjects;
DROP FUNCTION uncount_erased_subject_in_shard();
DROP TRIGGER subjects_uncounted_in_shards ON subjects;
DROP TRIGGER subjects_counted_in_shards ON subjects;
DROP FUNCTION count_subjects_in_shard();
DROP TABLE subject_count_shards;
