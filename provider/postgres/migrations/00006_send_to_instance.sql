-- +goose Up
-- This migration changed SQL functions only; those now live in functions.sql.

-- +goose Down
-- This migration changed SQL functions only; those now live in functions.sql.
