-- name: PruneExecutions :one
SELECT * FROM dx_prune_executions(@instance_id, @keep_last::integer, sqlc.narg(completed_before)::timestamptz);
