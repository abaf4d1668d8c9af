-- name: WorkerHeartbeat :exec
INSERT INTO workers (worker_id, info, started_at, last_seen) VALUES (@worker_id, @info, @now, @now)
ON CONFLICT (worker_id) DO UPDATE SET info = excluded.info, last_seen = excluded.last_seen;

-- name: WorkerRemove :exec
DELETE FROM workers WHERE worker_id = @worker_id;

-- name: WorkerList :many
SELECT worker_id, info, started_at, last_seen FROM workers WHERE last_seen >= @seen_since ORDER BY worker_id;
