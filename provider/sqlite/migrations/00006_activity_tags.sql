-- +goose Up
-- An activity's routing tag (WorkItem.Tag), NULL for untagged: a worker's
-- fetch takes only the tags it serves.
ALTER TABLE worker_queue ADD COLUMN tag TEXT;
CREATE INDEX worker_queue_tagged ON worker_queue (tag, id) WHERE tag IS NOT NULL;

-- +goose Down
DROP INDEX worker_queue_tagged;
ALTER TABLE worker_queue DROP COLUMN tag;
