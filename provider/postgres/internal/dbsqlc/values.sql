-- An instance's values, all or those of keys: no row when the instance does
-- not exist, one row with a NULL key when it holds none of them.
-- name: InstanceValues :many
SELECT v.key, v.value FROM instances i
LEFT JOIN instance_values v ON v.instance_id = i.instance_id AND (cardinality(@keys::text[]) = 0 OR v.key = ANY (@keys::text[]))
WHERE i.instance_id = @instance_id
ORDER BY v.key;
