-- The value travels only when the version moved.
-- name: CustomStatusIfChanged :one
SELECT i.custom_status_version,
       (SELECT c.custom_status FROM instances c
        WHERE c.instance_id = i.instance_id AND c.custom_status_version <> @known_version) AS custom_status
FROM instances i WHERE i.instance_id = @instance_id;

-- No row inserted means the execution already has the event.
-- name: HistoryAppend :execrows
INSERT INTO history (instance_id, execution_id, event_id, event_type, event_data, created_at)
VALUES (@instance_id, @execution_id, @event_id, @event_type, @event_data, @created_at) ON CONFLICT DO NOTHING;
