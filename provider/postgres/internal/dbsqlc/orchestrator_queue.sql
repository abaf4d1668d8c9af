-- name: OrchestratorItemAbandon :exec
SELECT dx_abandon_orchestration_item(@lock_token, @delay_ms::bigint, @ignore_attempt::boolean, sqlc.narg(last_error)::text);

-- name: OrchestratorLockRenew :exec
SELECT dx_renew_orchestration_lock(@lock_token, @extend_ms::bigint);

-- visible_ms is a timer's due time (Unix ms), 0 for other messages.
-- name: OrchestratorEnqueue :exec
SELECT dx_enqueue_orchestrator(@instance_id, @work_item, @visible_ms::bigint, @delay_ms::bigint);

-- name: InstanceSend :exec
SELECT dx_send_to_instance(@instance_id, @work_item);

-- name: StartQueued :one
SELECT dx_start_queued(@instance_id)::boolean AS queued;
