-- Finished root instances a bulk delete may take, oldest first, completed
-- before completed_before (Unix ms; NULL for no bound: 0 is a bound).
-- name: DeleteBulkCandidates :many
SELECT i.instance_id FROM instances i
JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.parent_instance_id IS NULL AND e.status IN ('Completed', 'Failed', 'Terminated')
  AND (CAST(sqlc.narg(completed_before) AS INTEGER) IS NULL OR e.completed_at < sqlc.narg(completed_before))
ORDER BY e.completed_at, i.instance_id;

-- DeleteBulkCandidates among the listed instances (a JSON array), which
-- the lookup starts from.
-- name: DeleteBulkCandidatesIn :many
SELECT i.instance_id FROM instances i
JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.parent_instance_id IS NULL AND e.status IN ('Completed', 'Failed', 'Terminated')
  AND i.instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)))
  AND (CAST(sqlc.narg(completed_before) AS INTEGER) IS NULL OR e.completed_at < sqlc.narg(completed_before))
ORDER BY e.completed_at, i.instance_id;

-- The listed instances (a JSON array) whose current execution has not finished.
-- name: DeleteRunningIn :many
SELECT i.instance_id FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)))
  AND COALESCE(e.status, 'Running') NOT IN ('Completed', 'Failed', 'Terminated')
ORDER BY i.instance_id;

-- The rows of the listed instances (a JSON array), table by table.

-- name: DeleteHistoryOf :execrows
DELETE FROM history WHERE instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)));

-- name: DeleteExecutionsOf :execrows
DELETE FROM executions WHERE instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)));

-- name: DeleteOrchestratorQueueOf :execrows
DELETE FROM orchestrator_queue WHERE instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)));

-- name: DeleteWorkerQueueOf :execrows
DELETE FROM worker_queue WHERE instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)));

-- name: DeleteInstanceLocksOf :execrows
DELETE FROM instance_locks WHERE instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)));

-- name: DeleteInstancesOf :execrows
DELETE FROM instances WHERE instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)));
