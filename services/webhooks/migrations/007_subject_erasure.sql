-- Up Migration
-- The subject an event is about (its `data.subject_id`), so that a subject's erasure and export
-- (docs/subjects.md) find its events without reading every body.
ALTER TABLE webhook_events ADD COLUMN subject_id uuid;
UPDATE webhook_events SET subject_id = (body::jsonb -> 'data' ->> 'subject_id')::uuid
WHERE body::jsonb -> 'data' ->> 'subject_id' ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
CREATE INDEX webhook_events_subject ON webhook_events (environment_id, subject_id) WHERE subject_id IS NOT NULL;

-- Down Migration
DROP INDEX webhook_events_subject;
ALTER TABLE webhook_events DROP COLUMN subject_id;
