-- +goose Up
-- The SHA-256 of the functions.sql last applied to this schema: a process
-- whose file differs applies its own (see functions.go).
CREATE TABLE schema_functions (
    singleton  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
    sha256     TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE schema_functions;
