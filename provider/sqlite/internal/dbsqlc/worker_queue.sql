-- The oldest ready item the tag filter takes (provider.TagFilter: any_tag,
-- or untagged items when untagged and those tagged one of the JSON array
-- tags).
-- name: WorkItemNext :one
SELECT id, instance_id, execution_id, activity_id, work_item FROM worker_queue
WHERE visible_at <= @now AND (lock_token IS NULL OR locked_until <= @now)
  AND (CAST(@any_tag AS BOOLEAN) OR (CAST(@untagged AS BOOLEAN) AND tag IS NULL)
       OR tag IN (SELECT value FROM json_each(CAST(@tags AS TEXT))))
ORDER BY id LIMIT 1;

-- name: WorkItemLock :one
UPDATE worker_queue SET lock_token = CAST(@lock_token AS TEXT), locked_until = CAST(@locked_until AS INTEGER), attempt_count = attempt_count + 1
WHERE id = @id RETURNING attempt_count;

-- Deletes a leased item whose lease is live; no row means the lease is not held.
-- name: WorkItemDelete :execrows
DELETE FROM worker_queue WHERE lock_token = CAST(@lock_token AS TEXT) AND locked_until > CAST(@now AS INTEGER);

-- name: WorkItemAbandon :execrows
UPDATE worker_queue SET lock_token = NULL, locked_until = NULL, visible_at = @visible_at,
    attempt_count = CASE WHEN CAST(@ignore_attempt AS BOOLEAN) THEN MAX(attempt_count - 1, 0) ELSE attempt_count END
WHERE lock_token = CAST(@lock_token AS TEXT) AND locked_until > CAST(@now AS INTEGER);

-- name: WorkItemRenew :one
UPDATE worker_queue SET locked_until = CAST(@locked_until AS INTEGER)
WHERE lock_token = CAST(@lock_token AS TEXT) AND locked_until > CAST(@now AS INTEGER)
RETURNING instance_id, execution_id;

-- Whether an activity's result is quiet: the instance is the incarnation and
-- execution the caller judged from, its history still ends at last_event,
-- and no live lock holds it.
-- name: WorkItemQuietCheck :one
SELECT CAST(COALESCE(i.incarnation = @incarnation AND i.current_execution_id = @execution_id
   AND (SELECT max(h.event_id) FROM history h WHERE h.instance_id = i.instance_id AND h.execution_id = @execution_id) = @last_event
   AND NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = i.instance_id AND l.locked_until > @now), 0) AS INTEGER) AS quiet
FROM instances i WHERE i.instance_id = @instance_id;

-- Leases the item a turn's ack just inserted for the activity.
-- name: WorkItemLeaseInserted :one
UPDATE worker_queue SET lock_token = CAST(@lock_token AS TEXT), locked_until = CAST(@locked_until AS INTEGER),
    attempt_count = attempt_count + 1
WHERE id = (SELECT w.id FROM worker_queue w WHERE w.instance_id = @instance_id AND w.execution_id = @execution_id
            AND w.activity_id = @activity_id AND w.lock_token IS NULL ORDER BY w.id DESC LIMIT 1)
RETURNING id, attempt_count, work_item;

-- name: WorkItemInsert :exec
INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, created_at, tag)
VALUES (@instance_id, @execution_id, @activity_id, @work_item, @visible_at, @created_at, sqlc.narg(tag));

-- Whether an activity the tag filter takes (as WorkItemNext) is visible
-- and not leased.
-- name: WorkItemReady :one
SELECT CAST(EXISTS (SELECT 1 FROM worker_queue
    WHERE visible_at <= @now AND (lock_token IS NULL OR locked_until <= @now)
  AND (CAST(@any_tag AS BOOLEAN) OR (CAST(@untagged AS BOOLEAN) AND tag IS NULL)
       OR tag IN (SELECT value FROM json_each(CAST(@tags AS TEXT))))) AS BOOLEAN) AS ready;

-- An activity the turn cancelled.
-- name: WorkItemCancel :exec
DELETE FROM worker_queue WHERE instance_id = @instance_id AND execution_id = @execution_id AND activity_id = @activity_id;

-- An instance's queued and leased activities, oldest first.
-- name: QueuedActivities :many
SELECT execution_id, activity_id, CAST(COALESCE(json_extract(work_item, '$.name'), '') AS TEXT) AS name,
       CAST(COALESCE(tag, '') AS TEXT) AS tag, created_at, attempt_count,
       CAST(lock_token IS NOT NULL AND locked_until > CAST(@now AS INTEGER) AS BOOLEAN) AS leased
FROM worker_queue WHERE instance_id = @instance_id
ORDER BY id LIMIT @max_rows;
