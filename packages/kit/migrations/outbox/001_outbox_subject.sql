-- Up Migration
-- Each row names the NATS subject it is published to (`events.<environment_id>.<type>` for the
-- events of docs/webhooks.md, other roots for other streams), so one relay serves every kind of row and
-- rows that belong to no environment can exist.
ALTER TABLE outbox ADD COLUMN subject text;
UPDATE outbox SET subject = 'events.' || environment_id || '.' || event_type WHERE subject IS NULL;
ALTER TABLE outbox ALTER COLUMN subject SET NOT NULL;
ALTER TABLE outbox ALTER COLUMN environment_id DROP NOT NULL;

-- Down Migration
DELETE FROM outbox WHERE environment_id IS NULL;
ALTER TABLE outbox ALTER COLUMN environment_id SET NOT NULL;
ALTER TABLE outbox DROP COLUMN subject;
