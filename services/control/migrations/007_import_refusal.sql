-- Up Migration
-- Fails the statement that calls it: an import's write whose plan the environment's count no
-- longer admits (src/db/subject-import.ts). The write goes in one round trip with the request's
-- idempotency outcome and COMMIT, so a write that is not admitted must fail, for the COMMIT
-- behind it not to run. Its own SQLSTATE tells it from every other failure. The previous
-- release never calls it.
CREATE FUNCTION import_not_admitted() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the import''s plan is not admitted by the subject count' USING ERRCODE = 'EV001';
END;
$$;

-- Down Migration
DROP FUNCTION import_not_admitted();
