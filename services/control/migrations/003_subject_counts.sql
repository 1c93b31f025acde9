-- Up Migration
-- Subjects per environment, kept by a trigger: imports check `active_subjects` on every batch,
-- and counting the subjects table there grew with the environment (a scan of its index, under
-- the environment's quota lock, so every import of the environment waited for it).
CREATE TABLE subject_counts (
  environment_id uuid PRIMARY KEY REFERENCES environments (id),
  subjects bigint NOT NULL CHECK (subjects >= 0)
);

INSERT INTO subject_counts (environment_id, subjects)
SELECT environment_id, count(*) FROM subjects GROUP BY environment_id;

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

-- Down Migration
DROP TRIGGER subjects_counted ON subjects;
DROP FUNCTION count_subjects();
DROP TABLE subject_counts;
