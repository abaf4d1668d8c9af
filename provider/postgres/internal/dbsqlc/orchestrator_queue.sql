-- name: OrchestratorItemAbandon :exec
SELECT dx_abandon_orchestration_item(@lock_token, @delay_ms::bigint, @ignore_attempt::boolean, sqlc.narg(last_error)::text);

-- name: OrchestratorLockRenew :exec
SELECT dx_renew_orchestration_lock(@lock_token, @extend_ms::bigint);

-- visible_ms is a timer's due time (Unix ms), 0 for other messages;
-- start_name and start_version, a start's (NULL for other messages).
-- name: OrchestratorEnqueue :exec
SELECT dx_enqueue_orchestrator(@instance_id, @work_item, @visible_ms::bigint, @delay_ms::bigint,
                               sqlc.narg(start_name)::text, sqlc.narg(start_version)::text);

-- name: InstanceSend :exec
SELECT dx_send_to_instance(@instance_id, @work_item);

-- name: StartQueued :one
SELECT dx_start_queued(@instance_id)::boolean AS queued;

-- What a rewind checks, in the transaction that queues it: the instance's
-- current execution, its status and parent, and whether a rewind is queued.
-- The row lock orders concurrent rewinds of one instance.
-- name: RewindTarget :one
SELECT i.current_execution_id, COALESCE(e.status, 'Running')::text AS status,
    COALESCE(i.parent_instance_id, '')::text AS parent,
    EXISTS (SELECT 1 FROM orchestrator_queue q
        WHERE q.instance_id = i.instance_id AND q.work_item::jsonb ->> 'kind' = 'Rewind') AS queued
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = @instance_id
FOR UPDATE OF i;

-- name: RewindEnqueue :exec
INSERT INTO orchestrator_queue (instance_id, work_item, visible_at) VALUES (@instance_id, @work_item, now());

-- A rewind opens the instance's next execution at once, so that its status
-- reads Running from the moment the rewind is queued; the instance counts
-- move from the failed execution's status to Running (status_counts).
-- name: RewindOpenExecution :exec
WITH opened AS (
    INSERT INTO executions AS e (instance_id, execution_id, status, started_at)
    VALUES (@instance_id, @execution_id, 'Running', now())
    RETURNING (SELECT o.status FROM executions o WHERE o.instance_id = e.instance_id AND o.execution_id = e.execution_id - 1) AS followed
), counted AS (
    INSERT INTO status_counts (status, n)
    SELECT c.status, c.n FROM opened o CROSS JOIN LATERAL (VALUES ('Running', 1), (o.followed, -1)) AS c(status, n)
    WHERE c.status IS NOT NULL
)
UPDATE instances i SET current_execution_id = @execution_id, status_seq = nextval('status_seq'),
    status_xid = pg_current_xact_id()::TEXT::BIGINT, updated_at = now()
WHERE i.instance_id = @instance_id;
