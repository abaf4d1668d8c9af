-- An instance's values, all or those of keys (a JSON array): no row when
-- the instance does not exist, one row with a NULL key when it holds none
-- of them.
-- name: InstanceValues :many
SELECT v.key, v.value FROM instances i
LEFT JOIN instance_values v ON v.instance_id = i.instance_id
    AND (json_array_length(CAST(@keys AS TEXT)) = 0 OR v.key IN (SELECT value FROM json_each(CAST(@keys AS TEXT))))
WHERE i.instance_id = @instance_id
ORDER BY v.key;

-- name: ValuesClearAll :exec
DELETE FROM instance_values WHERE instance_id = @instance_id;

-- name: ValueClear :exec
DELETE FROM instance_values WHERE instance_id = @instance_id AND key = @key;

-- name: ValueSet :exec
INSERT INTO instance_values (instance_id, key, value, execution_id, updated_at)
VALUES (@instance_id, @key, @value, @execution_id, @updated_at)
ON CONFLICT (instance_id, key) DO UPDATE
    SET value = excluded.value, execution_id = excluded.execution_id, updated_at = excluded.updated_at;

-- name: DeleteValuesOf :execrows
DELETE FROM instance_values WHERE instance_id IN (SELECT value FROM json_each(CAST(@instances AS TEXT)));
