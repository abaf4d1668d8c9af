-- +goose Up
-- Instance rows are created by the ack of an instance's first turn.
CREATE TABLE instances (
    instance_id           TEXT PRIMARY KEY,
    orchestration_name    TEXT NOT NULL,
    orchestration_version TEXT NOT NULL DEFAULT '',
    current_execution_id  INTEGER NOT NULL DEFAULT 1,
    parent_instance_id    TEXT,
    custom_status         TEXT,
    custom_status_version INTEGER NOT NULL DEFAULT 0,
    -- status_seq orders status changes for Watch (see status_seq table).
    status_seq            INTEGER NOT NULL DEFAULT 0,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
CREATE INDEX instances_parent ON instances (parent_instance_id);
CREATE INDEX instances_status_seq ON instances (status_seq);

CREATE TABLE executions (
    instance_id  TEXT NOT NULL,
    execution_id INTEGER NOT NULL,
    status       TEXT NOT NULL DEFAULT 'Running',
    output       TEXT,
    started_at   INTEGER NOT NULL,
    completed_at INTEGER,
    PRIMARY KEY (instance_id, execution_id)
);

CREATE TABLE history (
    instance_id  TEXT NOT NULL,
    execution_id INTEGER NOT NULL,
    event_id     INTEGER NOT NULL,
    event_type   TEXT NOT NULL,
    event_data   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (instance_id, execution_id, event_id)
);

-- Timers are orchestrator messages with a future visible_at.
CREATE TABLE orchestrator_queue (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id   TEXT NOT NULL,
    work_item     TEXT NOT NULL,
    visible_at    INTEGER NOT NULL,
    lock_token    TEXT,
    attempt_count INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);
CREATE INDEX orchestrator_queue_visible ON orchestrator_queue (visible_at, id);
CREATE INDEX orchestrator_queue_instance ON orchestrator_queue (instance_id, visible_at);
CREATE INDEX orchestrator_queue_token ON orchestrator_queue (lock_token);

CREATE TABLE worker_queue (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id   TEXT NOT NULL,
    execution_id  INTEGER NOT NULL,
    activity_id   INTEGER NOT NULL,
    work_item     TEXT NOT NULL,
    visible_at    INTEGER NOT NULL,
    lock_token    TEXT UNIQUE,
    locked_until  INTEGER,
    attempt_count INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);
CREATE INDEX worker_queue_visible ON worker_queue (visible_at, id);
CREATE INDEX worker_queue_activity ON worker_queue (instance_id, execution_id, activity_id);

-- One row per locked instance. A row whose locked_until has passed is free.
CREATE TABLE instance_locks (
    instance_id  TEXT PRIMARY KEY,
    lock_token   TEXT NOT NULL UNIQUE,
    locked_until INTEGER NOT NULL,
    locked_at    INTEGER NOT NULL
);

-- A single counter; every status or custom-status change takes the next value.
CREATE TABLE status_seq (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);
INSERT INTO status_seq (id, value) VALUES (1, 0);

-- +goose Down
DROP TABLE status_seq;
DROP TABLE instance_locks;
DROP TABLE worker_queue;
DROP TABLE orchestrator_queue;
DROP TABLE history;
DROP TABLE executions;
DROP TABLE instances;
