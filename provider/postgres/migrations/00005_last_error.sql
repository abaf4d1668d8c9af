-- +goose Up
-- Why an instance's last turn was handed back (provider.InstanceInfo.LastError).
-- It lives on the lock row, which a committed turn deletes.
ALTER TABLE instance_locks ADD COLUMN last_error TEXT;

-- +goose Down
ALTER TABLE instance_locks DROP COLUMN last_error;
