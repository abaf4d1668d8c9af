-- +goose Up
-- An activity's routing tag (WorkItem.Tag), NULL for untagged: a worker's
-- fetch takes only the tags it serves. Tagged items are looked up by tag,
-- so a pool serving one tag does not scan past everyone else's work.
ALTER TABLE worker_queue ADD COLUMN tag TEXT;
CREATE INDEX worker_queue_tagged ON worker_queue (tag, id) WHERE tag IS NOT NULL;

-- +goose Down
DROP INDEX worker_queue_tagged;
ALTER TABLE worker_queue DROP COLUMN tag;
