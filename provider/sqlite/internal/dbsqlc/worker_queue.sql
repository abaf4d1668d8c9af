-- The oldest ready item the tag filter takes (provider.TagFilter: any_tag,
-- or untagged items when untagged and those tagged one of the JSON array
-- tags) and the session rules allow (provider.Sessions): an item without a
-- session; with worker_id, one of a session it owns, or of a session nobody
-- owns while it has room for one more.
-- name: WorkItemNext :one
SELECT id, instance_id, execution_id, activity_id, work_item, session_id FROM worker_queue
WHERE visible_at <= @now AND (lock_token IS NULL OR locked_until <= @now)
  AND (CAST(@any_tag AS BOOLEAN) OR (CAST(@untagged AS BOOLEAN) AND tag IS NULL)
       OR tag IN (SELECT value FROM json_each(CAST(@tags AS TEXT))))
  AND (session_id IS NULL OR (sqlc.narg(worker_id) IS NOT NULL AND (
       EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = worker_queue.session_id AND s.worker_id = sqlc.narg(worker_id)
               AND s.locked_until > @now)
       OR (CAST(@room AS BOOLEAN) AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = worker_queue.session_id
                                                  AND s.locked_until > @now)))))
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
RETURNING instance_id, execution_id, session_id;

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
INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, created_at, tag, session_id)
VALUES (@instance_id, @execution_id, @activity_id, @work_item, @visible_at, @created_at, sqlc.narg(tag), sqlc.narg(session_id));

-- Whether an activity the tag filter takes (as WorkItemNext) is visible
-- and not leased.
-- name: WorkItemReady :one
SELECT CAST(EXISTS (SELECT 1 FROM worker_queue
    WHERE visible_at <= @now AND (lock_token IS NULL OR locked_until <= @now)
  AND (CAST(@any_tag AS BOOLEAN) OR (CAST(@untagged AS BOOLEAN) AND tag IS NULL)
       OR tag IN (SELECT value FROM json_each(CAST(@tags AS TEXT))))
  AND (session_id IS NULL OR (sqlc.narg(worker_id) IS NOT NULL AND (
       EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = worker_queue.session_id AND s.worker_id = sqlc.narg(worker_id)
               AND s.locked_until > @now)
       OR (CAST(@room AS BOOLEAN) AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = worker_queue.session_id
                                                  AND s.locked_until > @now)))))) AS BOOLEAN) AS ready;

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

-- How many live sessions the worker owns, and whether it owns session_id.
-- name: SessionsOwnedBy :one
SELECT CAST(COUNT(*) AS INTEGER) AS live, CAST(COALESCE(MAX(session_id = @session_id), 0) AS BOOLEAN) AS owns
FROM sessions WHERE worker_id = @worker_id AND locked_until > @now;

-- Claims a session for the worker, or extends its own; no row when another
-- worker owns it.
-- name: SessionClaim :execrows
INSERT INTO sessions (session_id, worker_id, locked_until, last_activity_at)
VALUES (@session_id, @worker_id, @locked_until, @now)
ON CONFLICT (session_id) DO UPDATE
    SET worker_id = excluded.worker_id, locked_until = excluded.locked_until, last_activity_at = excluded.last_activity_at
    WHERE sessions.worker_id = excluded.worker_id OR sessions.locked_until <= excluded.last_activity_at;

-- Notes work on the session of the item a lease holds (an ack's, before
-- it deletes the item).
-- name: SessionTouchLeased :exec
UPDATE sessions SET last_activity_at = @now
WHERE session_id = (SELECT w.session_id FROM worker_queue w WHERE w.lock_token = CAST(@lock_token AS TEXT));

-- Notes work on a session.
-- name: SessionTouch :exec
UPDATE sessions SET last_activity_at = @now WHERE session_id = @session_id;

-- name: SessionsRenew :execrows
UPDATE sessions SET locked_until = @locked_until
WHERE worker_id = @worker_id AND locked_until > @now AND last_activity_at > @active_since;

-- name: SessionsRelease :execrows
DELETE FROM sessions WHERE worker_id = @worker_id;

-- name: SessionsCleanup :execrows
DELETE FROM sessions WHERE sessions.locked_until <= CAST(@now AS INTEGER)
  AND NOT EXISTS (SELECT 1 FROM worker_queue w WHERE w.session_id = sessions.session_id);
