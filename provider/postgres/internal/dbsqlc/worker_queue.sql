-- sqlc does not read a RETURNS TABLE function's columns: they are named and
-- typed here.
-- name: WorkItemFetch :one
SELECT f.lock_token::text AS lock_token, f.attempt_count::integer AS attempt_count,
       f.instance_id::text AS instance_id, f.execution_id::bigint AS execution_id,
       f.activity_id::bigint AS activity_id, f.work_item::text AS work_item, f.state::text AS state,
       f.item_id::bigint AS item_id
FROM dx_fetch_work_item(@lock_ms::bigint, @any_tag::boolean, @untagged::boolean, @tags::text[],
                        sqlc.narg(worker_id)::text, @session_ms::bigint, @max_sessions::integer)
    AS f(lock_token, attempt_count, instance_id, execution_id, activity_id, work_item, state, item_id);

-- name: WorkItemAbandon :exec
SELECT dx_abandon_work_item(@lock_token, @delay_ms::bigint, @ignore_attempt::boolean);

-- The state of the item's instance (provider.ExecutionState).
-- name: WorkItemRenew :one
SELECT dx_renew_work_item(@lock_token, @extend_ms::bigint)::text AS state;

-- name: WorkItemEnqueue :exec
SELECT dx_enqueue_worker(@instance_id, @execution_id::bigint, @activity_id::bigint, @work_item, @delay_ms::bigint,
                         sqlc.narg(tag)::text, sqlc.narg(session)::text);

-- An instance's queued and leased activities, oldest first.
-- name: QueuedActivities :many
SELECT w.execution_id, w.activity_id, COALESCE(w.work_item::jsonb ->> 'name', '')::text AS name,
       COALESCE(w.tag, '')::text AS tag, w.created_at, w.attempt_count,
       (w.lock_token IS NOT NULL AND w.locked_until > now())::boolean AS leased
FROM worker_queue w WHERE w.instance_id = @instance_id
ORDER BY w.id LIMIT @max_rows;

-- name: SessionsRenew :one
SELECT dx_renew_sessions(@worker_id, @extend_ms::bigint, @idle_ms::bigint)::integer AS renewed;

-- name: SessionsRelease :one
SELECT dx_release_sessions(@worker_id)::integer AS released;

-- name: SessionsCleanup :one
SELECT dx_cleanup_sessions()::integer AS removed;
