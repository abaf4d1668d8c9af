-- name: HistoryCurrent :many
SELECT i.current_execution_id AS execution_id, h.event_id, h.event_data FROM history h
JOIN instances i ON i.instance_id = h.instance_id AND i.current_execution_id = h.execution_id
WHERE h.instance_id = @instance_id ORDER BY h.event_id;

-- name: HistoryOfExecution :many
SELECT execution_id, event_id, event_data FROM history
WHERE instance_id = @instance_id AND execution_id = @execution_id ORDER BY event_id;

-- name: HistoryAppend :exec
SELECT dx_append_history(@instance_id, @execution_id, @event_ids::bigint[], @event_kinds::text[], @event_data::text[]);

-- The value travels only when the version moved.
-- name: CustomStatusIfChanged :one
SELECT i.custom_status_version,
       (SELECT c.custom_status FROM instances c
        WHERE c.instance_id = i.instance_id AND c.custom_status_version <> @known_version::bigint) AS custom_status
FROM instances i WHERE i.instance_id = @instance_id;
