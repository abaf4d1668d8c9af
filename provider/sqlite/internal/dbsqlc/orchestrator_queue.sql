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

-- name: OrchestratorInsert :exec
INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, created_at)
VALUES (@instance_id, @work_item, @visible_at, @created_at);

-- Whether some instance has a visible message and no live lock.
-- name: OrchestratorReady :one
SELECT CAST(EXISTS (SELECT 1 FROM orchestrator_queue q
    LEFT JOIN instance_locks l ON l.instance_id = q.instance_id
    WHERE q.visible_at <= @now AND (l.instance_id IS NULL OR l.locked_until <= @now)) AS BOOLEAN) AS ready;

-- The owner the instance's queued start records.
-- name: QueuedStartOwner :one
SELECT CAST(COALESCE(json_extract(work_item, '$.owner'), '') AS TEXT) AS owner FROM orchestrator_queue
WHERE instance_id = @instance_id AND json_extract(work_item, '$.kind') = 'StartOrchestration' ORDER BY id LIMIT 1;
