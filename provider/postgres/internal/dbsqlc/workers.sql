-- name: WorkerHeartbeat :exec
INSERT INTO workers (worker_id, info) VALUES (@worker_id, @info::jsonb)
ON CONFLICT (worker_id) DO UPDATE SET info = excluded.info, last_seen = now();

-- name: WorkerRemove :exec
DELETE FROM workers WHERE worker_id = @worker_id;

-- name: WorkerList :many
SELECT worker_id, info::text AS info, started_at, last_seen FROM workers
WHERE last_seen >= now() - make_interval(secs => @within_seconds::float8) ORDER BY worker_id;
