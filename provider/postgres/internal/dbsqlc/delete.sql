-- name: DeleteInstances :one
SELECT * FROM dx_delete_instances(@instances::text[], @force::boolean);

-- name: DeleteBulk :one
SELECT * FROM dx_delete_bulk(@instances::text[], sqlc.narg(completed_before)::timestamptz, @max_instances::integer);
