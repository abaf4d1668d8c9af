-- name: InstanceLockDelete :exec
DELETE FROM instance_locks WHERE instance_id = @instance_id;

-- Whether a direct start may claim the instance: taken (it exists or has
-- messages queued), and its lock row's expiry (-1 without a lock row).
-- name: InstanceNewClaimCheck :one
SELECT CAST(EXISTS (SELECT 1 FROM instances i WHERE i.instance_id = @instance_id)
    OR EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = @instance_id) AS BOOLEAN) AS taken,
    CAST(COALESCE((SELECT l.locked_until FROM instance_locks l WHERE l.instance_id = @instance_id), -1) AS INTEGER) AS locked_until;

-- Whether a cached turn may claim the instance: it is still the incarnation
-- in the execution ending at last_event, running, with no message visible;
-- and its lock row's expiry (-1 without a lock row).
-- name: InstanceCachedClaimCheck :one
SELECT CAST(COALESCE(i.incarnation = @incarnation AND i.current_execution_id = @execution_id
   AND (SELECT max(h.event_id) FROM history h WHERE h.instance_id = i.instance_id AND h.execution_id = @execution_id) = @last_event
   AND COALESCE((SELECT e.status FROM executions e
                 WHERE e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id), 'Running') = 'Running'
   AND NOT EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = i.instance_id AND q.visible_at <= @now), 0) AS BOOLEAN) AS same,
   CAST(COALESCE((SELECT l.locked_until FROM instance_locks l WHERE l.instance_id = i.instance_id), -1) AS INTEGER) AS locked_until
FROM instances i WHERE i.instance_id = @instance_id;

-- Writes the instance's lock row under lock_token unless a live lock holds
-- it; no row changed means it is held.
-- name: InstanceLockTake :execrows
INSERT INTO instance_locks (instance_id, lock_token, locked_until, locked_at)
VALUES (@instance_id, @lock_token, @locked_until, @locked_at)
ON CONFLICT (instance_id) DO UPDATE
SET lock_token = excluded.lock_token, locked_until = excluded.locked_until, locked_at = excluded.locked_at
WHERE instance_locks.locked_until <= excluded.locked_at;

-- name: InstanceLockHeld :one
SELECT instance_id, locked_until FROM instance_locks WHERE lock_token = CAST(@lock_token AS TEXT);

-- name: InstanceLockRelease :exec
DELETE FROM instance_locks WHERE lock_token = CAST(@lock_token AS TEXT);

-- Keeps the lock row of an abandoned turn, under a token nobody holds,
-- until the delay passes, with why the turn was handed back.
-- name: InstanceLockDelay :exec
UPDATE instance_locks SET lock_token = CAST(@new_token AS TEXT), locked_until = CAST(@locked_until AS INTEGER),
    last_error = @last_error
WHERE lock_token = CAST(@lock_token AS TEXT);

-- name: InstanceLockRenew :execrows
UPDATE instance_locks SET locked_until = CAST(@locked_until AS INTEGER)
WHERE lock_token = CAST(@lock_token AS TEXT) AND locked_until > CAST(@now AS INTEGER);
