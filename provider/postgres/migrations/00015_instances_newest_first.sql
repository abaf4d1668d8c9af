-- +goose Up
-- ListInstances pages instances newest first by (created_at, instance_id):
-- a page is an index range, whatever the table's size.
CREATE INDEX instances_newest_first ON instances (created_at DESC, instance_id DESC);

-- +goose Down
DROP INDEX instances_newest_first;
