-- name: InstanceChildren :many
SELECT instance_id FROM instances WHERE parent_instance_id = CAST(@instance_id AS TEXT) ORDER BY created_at, rowid;

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
       (SELECT COUNT(*) FROM history h WHERE h.instance_id = e.instance_id AND h.execution_id = e.execution_id) AS event_count
FROM executions e WHERE e.instance_id = @instance_id AND e.execution_id = @execution_id;

-- name: InstanceParent :one
SELECT parent_instance_id FROM instances WHERE instance_id = @instance_id;

-- Root and every instance below it, parents first. UNION (not UNION ALL)
-- stops at a cycle should a corrupt store contain one.
-- name: InstanceTree :many
WITH RECURSIVE tree(id, depth) AS (
    SELECT CAST(@root AS TEXT), 0
    UNION
    SELECT i.instance_id, t.depth + 1 FROM instances i JOIN tree t ON i.parent_instance_id = t.id
    WHERE t.depth < 10000
)
SELECT CAST(id AS TEXT) AS id FROM tree GROUP BY id ORDER BY MIN(depth), id;

-- name: InstanceCurrentExecution :one
SELECT current_execution_id FROM instances WHERE instance_id = @instance_id;

-- name: ExecutionExists :one
SELECT 1 FROM executions WHERE instance_id = @instance_id AND execution_id = @execution_id;

-- name: InstanceExecutionState :one
SELECT i.current_execution_id, e.status FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = @instance_id;

-- name: InstanceCurrentStatus :one
SELECT e.status FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = @instance_id;

-- The instance with the ID: its status, parent and the owner its current
-- execution's start recorded.
-- name: InstanceIDHolder :one
SELECT CAST(COALESCE(e.status, 'Running') AS TEXT) AS status, i.parent_instance_id,
       CAST(COALESCE((SELECT json_extract(h.event_data, '$.owner') FROM history h
        WHERE h.instance_id = i.instance_id AND h.execution_id = i.current_execution_id
          AND h.event_type = 'OrchestrationStarted' ORDER BY h.event_id LIMIT 1), '') AS TEXT) AS owner
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = @instance_id;

-- name: InstanceForTurn :one
SELECT i.orchestration_name, i.orchestration_version, i.current_execution_id,
       i.parent_instance_id, i.custom_status, i.custom_status_version, e.status
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = @instance_id;

-- name: InstanceCreate :exec
INSERT INTO instances (instance_id, orchestration_name, orchestration_version, current_execution_id,
                       parent_instance_id, custom_status, custom_status_version, status_seq,
                       created_at, updated_at, incarnation)
VALUES (@instance_id, @orchestration_name, @orchestration_version, @execution_id, @parent_instance_id,
        @custom_status, @custom_status_version, @status_seq, @now, @now, @incarnation);

-- A turn's changes to its instance row: the current execution, the
-- orchestration's name and version when given, the custom status when set
-- (custom_set), the status sequence number when the status changed (seq > 0).
-- name: InstanceUpdate :exec
UPDATE instances SET
    current_execution_id = MAX(current_execution_id, CAST(@execution_id AS INTEGER)),
    orchestration_name = COALESCE(NULLIF(CAST(@orchestration_name AS TEXT), ''), orchestration_name),
    -- The version is pinned by an execution's first turn (it has no history
    -- yet), and stays for the execution.
    orchestration_version = CASE WHEN NULLIF(CAST(@orchestration_version AS TEXT), '') IS NOT NULL
            AND (CAST(@execution_id AS INTEGER) > current_execution_id OR NOT EXISTS (SELECT 1 FROM history h
                WHERE h.instance_id = @instance_id AND h.execution_id = CAST(@execution_id AS INTEGER)))
        THEN CAST(@orchestration_version AS TEXT) ELSE orchestration_version END,
    custom_status = CASE WHEN CAST(@custom_set AS BOOLEAN) THEN @custom_status ELSE custom_status END,
    custom_status_version = custom_status_version + CASE WHEN CAST(@custom_set AS BOOLEAN) THEN 1 ELSE 0 END,
    status_seq = CASE WHEN CAST(@seq AS INTEGER) > 0 THEN CAST(@seq AS INTEGER) ELSE status_seq END,
    updated_at = CAST(@now AS INTEGER)
WHERE instance_id = @instance_id;

-- One page of instances and queued starts, newest first (creation, then ID),
-- after the cursor; every filter is optional (NULL). A queued start has no
-- instance row yet: it is listed as Pending with what its message says.
-- Each side is filtered, ordered and cut to the page on its own, so the
-- instances' side walks instances_newest_first and stops at the page.
-- name: InstancePage :many
WITH inst AS (
    SELECT i.instance_id, i.orchestration_name, i.orchestration_version, i.current_execution_id,
           i.parent_instance_id, i.custom_status, i.custom_status_version, i.created_at, i.updated_at,
           CAST(COALESCE(e.status, 'Running') AS TEXT) AS status, CAST(COALESCE(e.output, '') AS TEXT) AS output, l.last_error
    FROM instances i
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    LEFT JOIN instance_locks l ON l.instance_id = i.instance_id
    WHERE (CAST(sqlc.narg(status) AS TEXT) IS NULL
           OR (CAST(sqlc.narg(status) AS TEXT) = 'Stalled' AND COALESCE(e.status, 'Running') = 'Running' AND l.last_error IS NOT NULL)
           OR COALESCE(e.status, 'Running') = CAST(sqlc.narg(status) AS TEXT))
      AND (CAST(sqlc.narg(orchestration) AS TEXT) IS NULL OR i.orchestration_name = CAST(sqlc.narg(orchestration) AS TEXT))
      AND (CAST(sqlc.narg(id_prefix) AS TEXT) IS NULL
           OR substr(i.instance_id, 1, length(CAST(sqlc.narg(id_prefix) AS TEXT))) = CAST(sqlc.narg(id_prefix) AS TEXT))
      AND (CAST(sqlc.narg(instance) AS TEXT) IS NULL OR i.instance_id = CAST(sqlc.narg(instance) AS TEXT))
      AND (CAST(sqlc.narg(created_after) AS INTEGER) IS NULL OR i.created_at >= CAST(sqlc.narg(created_after) AS INTEGER))
      AND (CAST(sqlc.narg(created_before) AS INTEGER) IS NULL OR i.created_at < CAST(sqlc.narg(created_before) AS INTEGER))
      AND (CAST(sqlc.narg(updated_after) AS INTEGER) IS NULL OR i.updated_at >= CAST(sqlc.narg(updated_after) AS INTEGER))
      AND (CAST(sqlc.narg(updated_before) AS INTEGER) IS NULL OR i.updated_at < CAST(sqlc.narg(updated_before) AS INTEGER))
      AND (CAST(sqlc.narg(after_created) AS INTEGER) IS NULL
           OR i.created_at < CAST(sqlc.narg(after_created) AS INTEGER)
           OR (i.created_at = CAST(sqlc.narg(after_created) AS INTEGER) AND i.instance_id < CAST(sqlc.narg(after_id) AS TEXT)))
    ORDER BY i.created_at DESC, i.instance_id DESC
    LIMIT @max_rows
), pend AS (
    SELECT q.instance_id, CAST(COALESCE(json_extract(q.work_item, '$.name'), '') AS TEXT) AS orchestration_name,
           CAST(COALESCE(json_extract(q.work_item, '$.version'), '') AS TEXT) AS orchestration_version,
           1 AS current_execution_id, json_extract(q.work_item, '$.parentInstance') AS parent_instance_id,
           NULL AS custom_status, 0 AS custom_status_version, q.created_at, q.created_at AS updated_at,
           'Pending' AS status, '' AS output, NULL AS last_error
    FROM orchestrator_queue q
    WHERE json_extract(q.work_item, '$.kind') = 'StartOrchestration'
      AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.instance_id = q.instance_id)
      AND (CAST(sqlc.narg(status) AS TEXT) IS NULL OR CAST(sqlc.narg(status) AS TEXT) = 'Pending')
      AND (CAST(sqlc.narg(orchestration) AS TEXT) IS NULL OR json_extract(q.work_item, '$.name') = CAST(sqlc.narg(orchestration) AS TEXT))
      AND (CAST(sqlc.narg(id_prefix) AS TEXT) IS NULL
           OR substr(q.instance_id, 1, length(CAST(sqlc.narg(id_prefix) AS TEXT))) = CAST(sqlc.narg(id_prefix) AS TEXT))
      AND (CAST(sqlc.narg(instance) AS TEXT) IS NULL OR q.instance_id = CAST(sqlc.narg(instance) AS TEXT))
      AND (CAST(sqlc.narg(created_after) AS INTEGER) IS NULL OR q.created_at >= CAST(sqlc.narg(created_after) AS INTEGER))
      AND (CAST(sqlc.narg(created_before) AS INTEGER) IS NULL OR q.created_at < CAST(sqlc.narg(created_before) AS INTEGER))
      AND (CAST(sqlc.narg(updated_after) AS INTEGER) IS NULL OR q.created_at >= CAST(sqlc.narg(updated_after) AS INTEGER))
      AND (CAST(sqlc.narg(updated_before) AS INTEGER) IS NULL OR q.created_at < CAST(sqlc.narg(updated_before) AS INTEGER))
      AND (CAST(sqlc.narg(after_created) AS INTEGER) IS NULL
           OR q.created_at < CAST(sqlc.narg(after_created) AS INTEGER)
           OR (q.created_at = CAST(sqlc.narg(after_created) AS INTEGER) AND q.instance_id < CAST(sqlc.narg(after_id) AS TEXT)))
    ORDER BY q.created_at DESC, q.instance_id DESC
    LIMIT @max_rows
), x AS (
    SELECT * FROM inst
    UNION ALL
    SELECT * FROM pend
)
SELECT x.instance_id, x.orchestration_name, x.orchestration_version, x.current_execution_id,
       x.parent_instance_id, x.custom_status, x.custom_status_version, x.created_at, x.updated_at,
       x.status, x.output, x.last_error
FROM x
ORDER BY x.created_at DESC, x.instance_id DESC
LIMIT @max_rows;
