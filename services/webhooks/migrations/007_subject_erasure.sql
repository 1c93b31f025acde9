-- Up Migration
-- The subject an event is about (its `data.subject_id`), so that a subject's erasure and export
-- (docs/subjects.md) find its events without reading every body. Events stored before this column
-- keep it null (no backfill under lock): the erasure and the export read their bodies instead,
-- and retention removes them. Its index: 008_subject_erasure_events.sql.
ALTER TABLE webhook_events ADD COLUMN subject_id uuid;

-- Down Migration
ALTER TABLE webhook_events DROP COLUMN subject_id;
