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

-- One page of instances and queued starts, newest first (creation, then ID),
-- after the cursor; every filter is optional (NULL). A queued start has no
-- instance row yet: it is listed as Pending with what its message says.
-- Each branch orders and limits itself, so the instances' is a range of
-- instances_newest_first that stops at the page's end.
-- name: InstancePage :many
SELECT * FROM ((
    SELECT i.instance_id, i.orchestration_name, i.orchestration_version, i.current_execution_id,
           i.parent_instance_id, i.custom_status, i.custom_status_version, i.created_at, i.updated_at,
           COALESCE(e.status, 'Running')::text AS status, COALESCE(e.output, '')::text AS output, l.last_error
    FROM instances i
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    LEFT JOIN instance_locks l ON l.instance_id = i.instance_id
    WHERE (sqlc.narg(status)::text IS NULL
           OR (sqlc.narg(status)::text = 'Stalled' AND COALESCE(e.status, 'Running') = 'Running' AND l.last_error IS NOT NULL)
           OR COALESCE(e.status, 'Running') = sqlc.narg(status)::text)
      AND (sqlc.narg(orchestration)::text IS NULL OR i.orchestration_name = sqlc.narg(orchestration)::text)
      AND (sqlc.narg(id_prefix)::text IS NULL OR starts_with(i.instance_id, sqlc.narg(id_prefix)::text))
      AND (sqlc.narg(instance)::text IS NULL OR i.instance_id = sqlc.narg(instance)::text)
      AND (sqlc.narg(created_after)::timestamptz IS NULL OR i.created_at >= sqlc.narg(created_after)::timestamptz)
      AND (sqlc.narg(created_before)::timestamptz IS NULL OR i.created_at < sqlc.narg(created_before)::timestamptz)
      AND (sqlc.narg(updated_after)::timestamptz IS NULL OR i.updated_at >= sqlc.narg(updated_after)::timestamptz)
      AND (sqlc.narg(updated_before)::timestamptz IS NULL OR i.updated_at < sqlc.narg(updated_before)::timestamptz)
      AND (sqlc.narg(after_created)::timestamptz IS NULL
           OR (i.created_at, i.instance_id) < (sqlc.narg(after_created)::timestamptz, sqlc.narg(after_id)::text))
    ORDER BY i.created_at DESC, i.instance_id DESC
    LIMIT @max_rows
) UNION ALL (
    SELECT q.instance_id, COALESCE(q.work_item::jsonb ->> 'name', ''), COALESCE(q.work_item::jsonb ->> 'version', ''),
           1::bigint, q.work_item::jsonb ->> 'parentInstance', NULL::text, 0::bigint, q.created_at, q.created_at,
           'Pending'::text, ''::text, NULL::text
    FROM orchestrator_queue q
    WHERE (q.work_item::jsonb ->> 'kind') = 'StartOrchestration'
      AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.instance_id = q.instance_id)
      AND (sqlc.narg(status)::text IS NULL OR sqlc.narg(status)::text = 'Pending')
      AND (sqlc.narg(orchestration)::text IS NULL OR q.work_item::jsonb ->> 'name' = sqlc.narg(orchestration)::text)
      AND (sqlc.narg(id_prefix)::text IS NULL OR starts_with(q.instance_id, sqlc.narg(id_prefix)::text))
      AND (sqlc.narg(instance)::text IS NULL OR q.instance_id = sqlc.narg(instance)::text)
      AND (sqlc.narg(created_after)::timestamptz IS NULL OR q.created_at >= sqlc.narg(created_after)::timestamptz)
      AND (sqlc.narg(created_before)::timestamptz IS NULL OR q.created_at < sqlc.narg(created_before)::timestamptz)
      AND (sqlc.narg(updated_after)::timestamptz IS NULL OR q.created_at >= sqlc.narg(updated_after)::timestamptz)
      AND (sqlc.narg(updated_before)::timestamptz IS NULL OR q.created_at < sqlc.narg(updated_before)::timestamptz)
      AND (sqlc.narg(after_created)::timestamptz IS NULL
           OR (q.created_at, q.instance_id) < (sqlc.narg(after_created)::timestamptz, sqlc.narg(after_id)::text))
    ORDER BY q.created_at DESC, q.instance_id DESC
    LIMIT @max_rows
)) page
ORDER BY created_at DESC, instance_id DESC
LIMIT @max_rows;
