-- Instance counts come from status_counts (migration 00016): reading sums
-- the deltas the triggers appended since the last read and folds them into
-- one row per status, in the same statement.
-- Stalled: running, its last turn handed back with a cause (instance_locks.last_error).
-- Pending: a queued start of an instance that does not exist yet.
-- Executions and events are counted exactly while the planner's estimate of
-- the table is under 10,000 rows, and read from the estimate beyond: a
-- count of a large history is a scan of it.
-- name: SystemMetrics :one
WITH moved AS (DELETE FROM status_counts RETURNING status, n),
     folded AS (INSERT INTO status_counts (status, n)
                SELECT m.status, sum(m.n) FROM moved m GROUP BY m.status HAVING sum(m.n) <> 0)
SELECT COALESCE(sum(m.n), 0)::bigint AS total_instances,
       COALESCE(sum(m.n) FILTER (WHERE m.status IN ('Running', 'ContinuedAsNew')), 0)::bigint AS running,
       COALESCE(sum(m.n) FILTER (WHERE m.status = 'Completed'), 0)::bigint AS completed,
       COALESCE(sum(m.n) FILTER (WHERE m.status = 'Failed'), 0)::bigint AS failed,
       COALESCE(sum(m.n) FILTER (WHERE m.status = 'Terminated'), 0)::bigint AS terminated,
       (SELECT count(*) FROM instance_locks l
        JOIN instances i ON i.instance_id = l.instance_id
        LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        WHERE l.last_error IS NOT NULL AND COALESCE(e.status, 'Running') = 'Running') AS stalled,
       (SELECT count(DISTINCT q.instance_id) FROM orchestrator_queue q
        WHERE q.work_item::jsonb ->> 'kind' = 'StartOrchestration'
          AND NOT EXISTS (SELECT 1 FROM instances x WHERE x.instance_id = q.instance_id)) AS pending,
       (SELECT CASE WHEN c.reltuples >= 10000 THEN c.reltuples::bigint ELSE (SELECT count(*) FROM executions) END
        FROM pg_catalog.pg_class c WHERE c.oid = to_regclass('executions'))::bigint AS total_executions,
       (SELECT CASE WHEN c.reltuples >= 10000 THEN c.reltuples::bigint ELSE (SELECT count(*) FROM history) END
        FROM pg_catalog.pg_class c WHERE c.oid = to_regclass('history'))::bigint AS total_events
FROM moved m;

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

-- Ready messages as QueueDepths counts them, by orchestration (the
-- instance's, or a queued start's) and by activity.
-- name: Backlog :many
SELECT b.kind::text AS kind, b.name::text AS name, b.ready::bigint AS ready, b.oldest::bigint AS oldest FROM (
    SELECT 'orchestration' AS kind, COALESCE(i.orchestration_name, q.work_item::jsonb ->> 'name', '') AS name,
           count(*) AS ready, (extract(epoch FROM min(q.visible_at)) * 1000)::bigint AS oldest
    FROM orchestrator_queue q LEFT JOIN instances i ON i.instance_id = q.instance_id
    WHERE q.visible_at <= now()
      AND NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > now())
    GROUP BY 2
    UNION ALL
    SELECT 'activity', COALESCE(w.work_item::jsonb ->> 'name', ''), count(*), (extract(epoch FROM min(w.visible_at)) * 1000)::bigint
    FROM worker_queue w
    WHERE w.visible_at <= now() AND (w.lock_token IS NULL OR w.locked_until <= now())
    GROUP BY 2
) b ORDER BY b.kind, b.name;
