-- +goose Up
-- Activity sessions (provider.Sessions): an item's session, and which
-- worker owns each session until when. A session row outlives its items
-- until its lease lapses and CleanupSessions removes it.
ALTER TABLE worker_queue ADD COLUMN session_id TEXT;
CREATE INDEX worker_queue_session ON worker_queue (session_id) WHERE session_id IS NOT NULL;

CREATE TABLE sessions (
    session_id       TEXT PRIMARY KEY,
    worker_id        TEXT NOT NULL,
    locked_until     INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL
);
CREATE INDEX sessions_worker ON sessions (worker_id);

-- +goose Down
DROP TABLE sessions;
DROP INDEX worker_queue_session;
ALTER TABLE worker_queue DROP COLUMN session_id;
