-- +goose Up
-- The generation of the functions.sql last applied (see functions.go): a
-- process applies its own file only over an older generation, so an older
-- pod restarting during a rolling upgrade never replaces newer functions.
-- Rows written before this migration read as generation 0.
ALTER TABLE schema_functions ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE schema_functions DROP COLUMN generation;
