-- +goose Up
-- Worker announcements (provider.Workers): which code each live worker runs.
CREATE TABLE workers (
    worker_id  TEXT PRIMARY KEY,
    info       TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL
);

-- +goose Down
DROP TABLE workers;
