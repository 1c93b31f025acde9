-- Up Migration
-- An import's state (src/db/subject-import.ts): the scope check, the environment's limit and
-- count, and which of the batch's external ids are known subjects, read with one plan kept for
-- the connection's life.
--
-- Sent as a prepared statement, Postgres planned it again on about a third of the imports: a
-- generic plan prices `external_id = ANY($4)` at 10 elements, a custom plan at the batch's own
-- (mostly 1), so once an environment had grown the generic plan looked five times dearer and
-- Postgres kept making custom plans, each the same shape (one probe of the unique (environment,
-- external id) index per id) and each ~0.2–0.4 ms of planning. Here the query is a PL/pgSQL
-- function's, whose plan Postgres caches per connection, and `plan_cache_mode` set on the
-- function keeps it generic from the first call. No read in it grows with the environment
-- whatever the plan (subject-import.test.ts): erased subjects are left out by the aggregate's
-- FILTER, so only that unique index fits.
-- STABLE: its queries read in the calling statement's snapshot, as the statement did.
CREATE FUNCTION import_state(environment uuid, app uuid, organization uuid, external_ids text[])
RETURNS TABLE (subject_limit integer, counted bigint, known json)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY
  SELECT q.active_subjects,
         (SELECT COALESCE(sum(c.subjects), 0)::bigint FROM subject_count_shards c
          WHERE c.environment_id = environment),
         COALESCE((SELECT json_object_agg(s.external_id, s.id) FILTER (WHERE s.erased_at IS NULL)
                   FROM subjects s
                   WHERE s.environment_id = environment AND s.external_id = ANY (external_ids)), '{}')
  FROM environments e JOIN apps a ON a.id = e.app_id
  JOIN quotas q ON q.environment_id = e.id
  WHERE e.id = environment AND a.id = app AND a.organization_id = organization;
END;
$$;

-- Down Migration
DROP FUNCTION import_state(uuid, uuid, uuid, text[]);
