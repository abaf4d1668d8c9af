-- +goose Up
-- Objects are created in the provider's schema: every connection of the
-- provider sets search_path to it. The SQL functions are not migrations: they
-- live in functions.sql, applied after the migrations when it changes.

CREATE TABLE instances (
    instance_id           TEXT PRIMARY KEY,
    orchestration_name    TEXT NOT NULL,
    orchestration_version TEXT NOT NULL DEFAULT '',
    current_execution_id  BIGINT NOT NULL DEFAULT 1,
    parent_instance_id    TEXT,
    custom_status         TEXT,
    custom_status_version BIGINT NOT NULL DEFAULT 0,
    -- status_seq orders status changes; status_xid is the transaction that made
    -- the last one. Watch reads changes whose transaction is below the oldest
    -- running one, so a change that commits late is still seen.
    status_seq            BIGINT NOT NULL DEFAULT 0,
    status_xid            BIGINT NOT NULL DEFAULT 0,
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at            TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX instances_parent ON instances (parent_instance_id);
CREATE INDEX instances_status_xid ON instances (status_xid);

CREATE TABLE executions (
    instance_id  TEXT NOT NULL,
    execution_id BIGINT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'Running',
    output       TEXT,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    completed_at TIMESTAMPTZ,
    PRIMARY KEY (instance_id, execution_id)
);

CREATE TABLE history (
    instance_id  TEXT NOT NULL,
    execution_id BIGINT NOT NULL,
    event_id     BIGINT NOT NULL,
    event_type   TEXT NOT NULL,
    event_data   TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, execution_id, event_id)
);

CREATE TABLE orchestrator_queue (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    instance_id   TEXT NOT NULL,
    work_item     TEXT NOT NULL,
    visible_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    lock_token    TEXT,
    attempt_count INT NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX orchestrator_queue_visible ON orchestrator_queue (visible_at, id);
CREATE INDEX orchestrator_queue_instance ON orchestrator_queue (instance_id, visible_at);
CREATE INDEX orchestrator_queue_token ON orchestrator_queue (lock_token) WHERE lock_token IS NOT NULL;

CREATE TABLE worker_queue (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    instance_id   TEXT NOT NULL,
    execution_id  BIGINT NOT NULL,
    activity_id   BIGINT NOT NULL,
    work_item     TEXT NOT NULL,
    visible_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    lock_token    TEXT UNIQUE,
    locked_until  TIMESTAMPTZ,
    attempt_count INT NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX worker_queue_visible ON worker_queue (visible_at, id);
CREATE INDEX worker_queue_activity ON worker_queue (instance_id, execution_id, activity_id);

CREATE TABLE instance_locks (
    instance_id  TEXT PRIMARY KEY,
    lock_token   TEXT NOT NULL UNIQUE,
    locked_until TIMESTAMPTZ NOT NULL,
    locked_at    TIMESTAMPTZ NOT NULL
);

CREATE SEQUENCE status_seq;

-- +goose Down
-- Migrating down to nothing removes the functions too (functions.sql made them).
-- +goose StatementBegin
DO $$
DECLARE
    v_fn REGPROCEDURE;
BEGIN
    FOR v_fn IN SELECT p.oid::regprocedure FROM pg_proc p
                WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'dx\_%'
    LOOP
        EXECUTE 'DROP FUNCTION ' || v_fn::text;
    END LOOP;
END $$;
-- +goose StatementEnd
DROP SEQUENCE status_seq;
DROP TABLE instance_locks, worker_queue, orchestrator_queue, history, executions, instances;
