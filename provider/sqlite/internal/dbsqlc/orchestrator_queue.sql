-- name: InstanceHasVisible :one
SELECT EXISTS (SELECT 1 FROM orchestrator_queue WHERE instance_id = @instance_id AND visible_at <= @now) AS visible;

-- Deletes one visible, untaken message of the instance stored as work_item
-- (a message a cached turn consumes); no row means it was taken or is not due.
-- name: OrchestratorMessageConsume :execrows
DELETE FROM orchestrator_queue WHERE id = (SELECT q.id FROM orchestrator_queue q
    WHERE q.instance_id = @instance_id AND q.visible_at <= @now AND q.lock_token IS NULL AND q.work_item = @work_item LIMIT 1);
