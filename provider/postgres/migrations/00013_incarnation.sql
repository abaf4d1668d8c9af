-- +goose Up
-- A random number given to an instance when it is created, telling one life
-- of an instance ID from the next (deleted and started again): the history
-- cache (provider/internal/histcache) trusts a cached history only for the
-- incarnation it was read from. Instances created before this migration keep 0.
ALTER TABLE instances ADD COLUMN incarnation BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE instances DROP COLUMN incarnation;
