-- name: WatchSnapshot :one
SELECT pg_current_snapshot()::text AS snapshot, pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin;
