-- name: StatusSeqRead :one
SELECT value FROM status_seq WHERE id = 1;

-- name: StatusSeqStore :exec
UPDATE status_seq SET value = @value WHERE id = 1;

-- The instances whose status or custom status changed after seq, in order.
-- name: StatusChangesAfter :many
SELECT i.instance_id, i.current_execution_id, CAST(COALESCE(e.status, 'Running') AS TEXT) AS status,
       i.custom_status_version, i.status_seq
FROM instances i
LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.status_seq > @seq ORDER BY i.status_seq LIMIT @max_changes;
