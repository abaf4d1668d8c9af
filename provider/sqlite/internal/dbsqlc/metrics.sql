-- Stalled: running, its last turn handed back with a cause (instance_locks.last_error).
-- Pending: a queued start of an instance that does not exist yet.
-- name: SystemMetrics :one
SELECT
    (SELECT COUNT(*) FROM instances) AS total_instances,
    CAST(COALESCE(SUM(e.status = 'Running' OR e.status = 'ContinuedAsNew'), 0) AS INTEGER) AS running,
    CAST(COALESCE(SUM(e.status = 'Completed'), 0) AS INTEGER) AS completed,
    CAST(COALESCE(SUM(e.status = 'Failed'), 0) AS INTEGER) AS failed,
    CAST(COALESCE(SUM(e.status = 'Terminated'), 0) AS INTEGER) AS terminated,
    CAST(COALESCE(SUM(COALESCE(e.status, 'Running') = 'Running' AND l.last_error IS NOT NULL), 0) AS INTEGER) AS stalled,
    (SELECT COUNT(DISTINCT q.instance_id) FROM orchestrator_queue q
     WHERE json_extract(q.work_item, '$.kind') = 'StartOrchestration'
       AND NOT EXISTS (SELECT 1 FROM instances x WHERE x.instance_id = q.instance_id)) AS pending,
    (SELECT COUNT(*) FROM executions) AS total_executions,
    (SELECT COUNT(*) FROM history) AS total_events
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
LEFT JOIN instance_locks l ON l.instance_id = i.instance_id;

-- oldest_*: when the longest-waiting ready message became visible (Unix ms, 0: none).
-- name: QueueDepths :one
SELECT
    (SELECT COUNT(*) FROM orchestrator_queue q LEFT JOIN instance_locks l ON l.instance_id = q.instance_id
     WHERE q.visible_at <= @now AND (l.instance_id IS NULL OR l.locked_until <= @now)) AS orchestrator,
    (SELECT COUNT(*) FROM worker_queue WHERE visible_at <= @now AND (lock_token IS NULL OR locked_until <= @now)) AS worker,
    CAST((SELECT COUNT(*) FROM orchestrator_queue WHERE visible_at > @now)
      + (SELECT COUNT(*) FROM worker_queue WHERE visible_at > @now AND lock_token IS NULL) AS INTEGER) AS delayed,
    CAST((SELECT COUNT(*) FROM orchestrator_queue q JOIN instance_locks l ON l.instance_id = q.instance_id
     WHERE q.visible_at <= @now AND l.locked_until > @now)
      + (SELECT COUNT(*) FROM worker_queue WHERE lock_token IS NOT NULL AND locked_until > @now) AS INTEGER) AS locked,
    CAST(COALESCE((SELECT MIN(q.visible_at) FROM orchestrator_queue q LEFT JOIN instance_locks l ON l.instance_id = q.instance_id
     WHERE q.visible_at <= @now AND (l.instance_id IS NULL OR l.locked_until <= @now)), 0) AS INTEGER) AS oldest_orchestrator,
    CAST(COALESCE((SELECT MIN(visible_at) FROM worker_queue
     WHERE visible_at <= @now AND (lock_token IS NULL OR locked_until <= @now)), 0) AS INTEGER) AS oldest_worker;

-- Ready messages as QueueDepths counts them, by orchestration (the
-- instance's, or a queued start's) and by activity.
-- name: Backlog :many
SELECT CAST(b.kind AS TEXT) AS kind, CAST(b.name AS TEXT) AS name, CAST(b.ready AS INTEGER) AS ready, CAST(b.oldest AS INTEGER) AS oldest FROM (
    SELECT 'orchestration' AS kind, COALESCE(i.orchestration_name, json_extract(q.work_item, '$.name'), '') AS name,
           COUNT(*) AS ready, MIN(q.visible_at) AS oldest
    FROM orchestrator_queue q
    LEFT JOIN instances i ON i.instance_id = q.instance_id
    LEFT JOIN instance_locks l ON l.instance_id = q.instance_id
    WHERE q.visible_at <= @now AND (l.instance_id IS NULL OR l.locked_until <= @now)
    GROUP BY 2
    UNION ALL
    SELECT 'activity', COALESCE(json_extract(w.work_item, '$.name'), ''), COUNT(*), MIN(w.visible_at)
    FROM worker_queue w
    WHERE w.visible_at <= @now AND (w.lock_token IS NULL OR w.locked_until <= @now)
    GROUP BY 2
) b ORDER BY b.kind, b.name;
