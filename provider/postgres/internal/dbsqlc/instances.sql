-- name: InstanceList :many
SELECT instance_id FROM instances ORDER BY created_at DESC, instance_id DESC;

-- name: InstanceListByStatus :many
SELECT i.instance_id FROM instances i
JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE e.status = @status ORDER BY i.created_at DESC, i.instance_id DESC;

-- name: InstanceChildren :many
SELECT instance_id FROM instances WHERE parent_instance_id = @instance_id::text ORDER BY created_at, instance_id;

-- name: InstanceExecutions :many
SELECT execution_id FROM executions WHERE instance_id = @instance_id ORDER BY execution_id;

-- name: InstanceInfo :one
SELECT i.orchestration_name, i.orchestration_version, i.current_execution_id, i.parent_instance_id,
       i.custom_status, i.custom_status_version, i.created_at, i.updated_at,
       e.status, e.output, l.last_error
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
LEFT JOIN instance_locks l ON l.instance_id = i.instance_id
WHERE i.instance_id = @instance_id;

-- name: ExecutionInfo :one
SELECT e.status, e.output, e.started_at, e.completed_at,
       (SELECT count(*) FROM history h WHERE h.instance_id = e.instance_id AND h.execution_id = e.execution_id) AS event_count
FROM executions e WHERE e.instance_id = @instance_id AND e.execution_id = @execution_id;

-- name: InstanceParent :one
SELECT parent_instance_id FROM instances WHERE instance_id = @instance_id;

-- An empty result means the root does not exist.
-- name: InstanceTree :many
SELECT d.instance_id::text AS instance_id FROM dx_descendants(@root) AS d(instance_id, depth)
WHERE EXISTS (SELECT 1 FROM instances i WHERE i.instance_id = @root)
ORDER BY d.depth, d.instance_id;
