-- name: InstanceHasVisible :one
SELECT EXISTS (SELECT 1 FROM orchestrator_queue WHERE instance_id = @instance_id AND visible_at <= @now) AS visible;

-- Deletes one visible, untaken message of the instance stored as work_item
-- (a message a cached turn consumes); no row means it was taken or is not due.
-- name: OrchestratorMessageConsume :execrows
DELETE FROM orchestrator_queue WHERE id = (SELECT q.id FROM orchestrator_queue q
    WHERE q.instance_id = @instance_id AND q.visible_at <= @now AND q.lock_token IS NULL AND q.work_item = @work_item LIMIT 1);

-- name: StartQueued :one
SELECT CAST(EXISTS (SELECT 1 FROM orchestrator_queue
    WHERE instance_id = @instance_id AND json_extract(work_item, '$.kind') = 'StartOrchestration') AS BOOLEAN) AS queued;

-- start_name and start_version are a start's orchestration and requested
-- version (NULL for other messages).
-- name: OrchestratorInsert :exec
INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, created_at, start_name, start_version)
VALUES (@instance_id, @work_item, @visible_at, @created_at, sqlc.narg(start_name), sqlc.narg(start_version));

-- Whether some instance has a visible message and no live lock, and, with
-- cap_keys and cap_names (provider.Capability.Keys as JSON arrays), is
-- admitted as readyInstancesQuery admits it.
-- name: OrchestratorReady :one
SELECT CAST(EXISTS (SELECT 1 FROM orchestrator_queue q
    LEFT JOIN instance_locks l ON l.instance_id = q.instance_id
    LEFT JOIN instances i ON i.instance_id = q.instance_id
    WHERE q.visible_at <= @now AND (l.instance_id IS NULL OR l.locked_until <= @now)
      AND (sqlc.narg(cap_keys) IS NULL
           OR (i.instance_id IS NOT NULL AND (i.orchestration_name || char(31) || i.orchestration_version IN (SELECT value FROM json_each(sqlc.narg(cap_keys)))
                                              OR (i.orchestration_version = '' AND i.orchestration_name IN (SELECT value FROM json_each(sqlc.narg(cap_names))))))
           OR (i.instance_id IS NULL AND NOT EXISTS (
               SELECT 1 FROM orchestrator_queue s WHERE s.instance_id = q.instance_id AND s.start_name IS NOT NULL
                 AND NOT (s.start_name || char(31) || s.start_version IN (SELECT value FROM json_each(sqlc.narg(cap_keys)))
                          OR (s.start_version = '' AND s.start_name IN (SELECT value FROM json_each(sqlc.narg(cap_names))))))))) AS BOOLEAN) AS ready;

-- The owner the instance's queued start records.
-- name: QueuedStartOwner :one
SELECT CAST(COALESCE(json_extract(work_item, '$.owner'), '') AS TEXT) AS owner FROM orchestrator_queue
WHERE instance_id = @instance_id AND json_extract(work_item, '$.kind') = 'StartOrchestration' ORDER BY id LIMIT 1;

-- When the earliest delayed message becomes visible (0: none).
-- name: OrchestratorNextDue :one
SELECT CAST(COALESCE(MIN(visible_at), 0) AS INTEGER) AS due FROM orchestrator_queue WHERE visible_at > @now;

-- Tags the instance's visible messages with its new lock token.
-- name: OrchestratorTagVisible :exec
UPDATE orchestrator_queue SET lock_token = CAST(@lock_token AS TEXT), attempt_count = attempt_count + 1
WHERE instance_id = @instance_id AND visible_at <= @now;

-- name: OrchestratorTagged :many
SELECT id, work_item, attempt_count FROM orchestrator_queue
WHERE lock_token = CAST(@lock_token AS TEXT) ORDER BY id;

-- The messages a turn consumed.
-- name: OrchestratorDeleteTagged :exec
DELETE FROM orchestrator_queue WHERE lock_token = CAST(@lock_token AS TEXT);

-- name: OrchestratorUntag :exec
UPDATE orchestrator_queue SET lock_token = NULL WHERE lock_token = CAST(@lock_token AS TEXT);

-- name: OrchestratorUncountAttempt :exec
UPDATE orchestrator_queue SET attempt_count = MAX(attempt_count - 1, 0) WHERE lock_token = CAST(@lock_token AS TEXT);

-- A timer the turn cancelled.
-- name: TimerCancel :exec
DELETE FROM orchestrator_queue WHERE instance_id = @instance_id AND json_extract(work_item, '$.kind') = 'TimerFired'
AND json_extract(work_item, '$.executionId') = CAST(@execution_id AS INTEGER) AND json_extract(work_item, '$.id') = CAST(@timer_id AS INTEGER);

-- What a rewind checks, in the transaction that queues it: the instance's
-- current execution, its status and parent, and whether a rewind is queued.
-- name: RewindTarget :one
SELECT i.current_execution_id, CAST(COALESCE(e.status, 'Running') AS TEXT) AS status,
    CAST(COALESCE(i.parent_instance_id, '') AS TEXT) AS parent,
    CAST(EXISTS (SELECT 1 FROM orchestrator_queue q
        WHERE q.instance_id = i.instance_id AND json_extract(q.work_item, '$.kind') = 'Rewind') AS BOOLEAN) AS queued
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = @instance_id;
