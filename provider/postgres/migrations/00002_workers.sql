-- +goose Up
-- Worker announcements (provider.Workers): which code each live worker runs.
CREATE TABLE workers (
    worker_id  TEXT PRIMARY KEY,
    info       JSONB NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE workers;
