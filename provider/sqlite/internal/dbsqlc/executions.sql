-- name: ExecutionCreate :exec
INSERT INTO executions (instance_id, execution_id, status, started_at) VALUES (@instance_id, @execution_id, 'Running', @started_at)
ON CONFLICT DO NOTHING;

-- completed_at is NULL while the execution runs.
-- name: ExecutionSetStatus :exec
UPDATE executions SET status = @status, output = @output, completed_at = @completed_at
WHERE instance_id = @instance_id AND execution_id = @execution_id;
