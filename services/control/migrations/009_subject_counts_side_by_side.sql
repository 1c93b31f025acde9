-- Up Migration
-- Subject counts in shards, the second of two releases (docs/decisions.md "Subject counts in
-- shards"): imports into one environment run side by side while its count is far from the limit.
--
-- Imports no longer take `subject_counts`' row, so its triggers (migrations 003 and 005) stop
-- keeping it: they updated that one row per subject written, which serialized every import of
-- the environment. The previous release (migration 008's) still locks the row, and makes it,
-- but reads only the shards (`locked_subject_count`), so no release running beside this one
-- reads the row's value. Dropping it, and `locked_subject_count`, waits for the release after.
DROP TRIGGER subjects_counted ON subjects;
DROP TRIGGER subjects_uncounted_on_erasure ON subjects;
DROP FUNCTION count_subjects();
DROP FUNCTION uncount_erased_subject();

-- An import's count, under the locks that keep the quota exact (src/db/subject-import.ts says
-- when an import takes which):
-- - `shared`: the count's lock shared, then the lock of the backend's shard (the shard its
--   triggers write, so no two such imports write one shard). At most 8 imports hold both at
--   once, one per shard, and each writes at most what it checked. The shard's lock second: a
--   session holding the count's lock exclusively, which takes the shared path too when its plan
--   is far from the limit, finds no other session holding a shard's lock to wait for.
-- - otherwise, the count's lock exclusively, as the previous release's imports take it (after
--   the row): every import that held it either way has committed.
-- VOLATILE, so in READ COMMITTED the sum is read in a snapshot taken after the locks are held,
-- whatever the calling statement's snapshot. 0 for an environment without shards.
CREATE FUNCTION counted_subjects(environment uuid, shared boolean) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  counted bigint;
BEGIN
  IF shared THEN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended('subject_count:' || environment::text, 0));
    PERFORM pg_advisory_xact_lock(
      hashtextextended('subject_count:' || environment::text || ':' || (pg_backend_pid() % 8)::text, 0));
  ELSE
    PERFORM pg_advisory_xact_lock(hashtextextended('subject_count:' || environment::text, 0));
  END IF;
  SELECT COALESCE(sum(subjects), 0) INTO counted FROM subject_count_shards WHERE environment_id = environment;
  RETURN counted;
END;
$$;

-- Down Migration
DROP FUNCTION counted_subjects(uuid, boolean);
CREATE FUNCTION count_subjects() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO subject_counts (environment_id, subjects) VALUES (NEW.environment_id, 1)
    ON CONFLICT (environment_id) DO UPDATE SET subjects = subject_counts.subjects + 1;
    RETURN NEW;
  END IF;
  UPDATE subject_counts SET subjects = subjects - 1 WHERE environment_id = OLD.environment_id;
  RETURN OLD;
END;
$$;
CREATE TRIGGER subjects_counted AFTER INSERT OR DELETE ON subjects
FOR EACH ROW EXECUTE FUNCTION count_subjects();
CREATE FUNCTION uncount_erased_subject() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE subject_counts SET subjects = subjects - 1 WHERE environment_id = NEW.environment_id;
  RETURN NULL;
END;
$$;
CREATE TRIGGER subjects_uncounted_on_erasure AFTER UPDATE OF erased_at ON subjects
FOR EACH ROW WHEN (OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL)
EXECUTE FUNCTION uncount_erased_subject();
-- The triggers first (no subject is written until this commits), then the rows from the shards.
INSERT INTO subject_counts (environment_id, subjects)
SELECT environment_id, sum(subjects) FROM subject_count_shards GROUP BY environment_id
ON CONFLICT (environment_id) DO UPDATE SET subjects = EXCLUDED.subjects;
