-- name: PruneCandidates :many
SELECT execution_id, completed_at FROM executions WHERE instance_id = @instance_id ORDER BY execution_id DESC;

-- name: PruneHistory :execrows
DELETE FROM history WHERE instance_id = @instance_id AND execution_id = @execution_id;

-- name: PruneExecution :exec
DELETE FROM executions WHERE instance_id = @instance_id AND execution_id = @execution_id;
