-- Stalled: running, its last turn handed back with a cause (instance_locks.last_error).
-- Pending: a queued start of an instance that does not exist yet.
-- name: SystemMetrics :one
SELECT count(*) AS total_instances,
       count(*) FILTER (WHERE e.status IN ('Running', 'ContinuedAsNew')) AS running,
       count(*) FILTER (WHERE e.status = 'Completed') AS completed,
       count(*) FILTER (WHERE e.status = 'Failed') AS failed,
       count(*) FILTER (WHERE e.status = 'Terminated') AS terminated,
       count(*) FILTER (WHERE COALESCE(e.status, 'Running') = 'Running' AND l.last_error IS NOT NULL) AS stalled,
       (SELECT count(DISTINCT q.instance_id) FROM orchestrator_queue q
        WHERE q.work_item::jsonb ->> 'kind' = 'StartOrchestration'
          AND NOT EXISTS (SELECT 1 FROM instances x WHERE x.instance_id = q.instance_id)) AS pending,
       (SELECT count(*) FROM executions) AS total_executions,
       (SELECT count(*) FROM history) AS total_events
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
LEFT JOIN instance_locks l ON l.instance_id = i.instance_id;

-- oldest_*: when the longest-waiting ready message became visible (Unix ms, 0: none).
-- name: QueueDepths :one
SELECT
    (SELECT count(*) FROM orchestrator_queue q WHERE q.visible_at <= now()
       AND NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > now())) AS orchestrator,
    (SELECT count(*) FROM worker_queue WHERE visible_at <= now() AND (lock_token IS NULL OR locked_until <= now())) AS worker,
    ((SELECT count(*) FROM orchestrator_queue WHERE visible_at > now())
      + (SELECT count(*) FROM worker_queue WHERE visible_at > now() AND lock_token IS NULL))::bigint AS delayed,
    ((SELECT count(*) FROM orchestrator_queue q JOIN instance_locks l ON l.instance_id = q.instance_id
       WHERE q.visible_at <= now() AND l.locked_until > now())
      + (SELECT count(*) FROM worker_queue WHERE lock_token IS NOT NULL AND locked_until > now()))::bigint AS locked,
    COALESCE((SELECT (extract(epoch FROM min(q.visible_at)) * 1000)::bigint FROM orchestrator_queue q WHERE q.visible_at <= now()
       AND NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > now())), 0)::bigint AS oldest_orchestrator,
    COALESCE((SELECT (extract(epoch FROM min(visible_at)) * 1000)::bigint FROM worker_queue
       WHERE visible_at <= now() AND (lock_token IS NULL OR locked_until <= now())), 0)::bigint AS oldest_worker;
