-- +goose Up
-- Lock one named instance and return its turn, as dx_fetch_orchestration_items
-- does for ready ones: for a process that must run a turn no worker will
-- (terminating an instance whose workers are gone). No row when a live lock
-- holds the instance or it has no visible message.

-- +goose StatementBegin
CREATE FUNCTION dx_fetch_instance_item(p_instance TEXT, p_lock_ms BIGINT)
RETURNS TABLE (
    instance_id TEXT, lock_token TEXT, item_exists BOOLEAN, orchestration_name TEXT, orchestration_version TEXT,
    execution_id BIGINT, status TEXT, parent_instance_id TEXT, custom_status TEXT, custom_status_version BIGINT,
    attempt_count INT, message_ids BIGINT[], messages TEXT[], event_ids BIGINT[], events TEXT[],
    next_visible_ms BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    v_now    TIMESTAMPTZ := now();
    v_token  TEXT := gen_random_uuid()::text;
    v_until  TIMESTAMPTZ;
    v_tagged INT;
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext(current_schema() || '/' || p_instance)) THEN
        RETURN;
    END IF;
    SELECT l.locked_until INTO v_until FROM instance_locks l
    WHERE l.instance_id = p_instance FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        IF v_until > v_now THEN
            RETURN;
        END IF;
        UPDATE instance_locks l SET lock_token = v_token,
            locked_until = v_now + p_lock_ms * interval '1 millisecond', locked_at = v_now
        WHERE l.instance_id = p_instance;
    ELSE
        INSERT INTO instance_locks (instance_id, lock_token, locked_until, locked_at)
        VALUES (p_instance, v_token, v_now + p_lock_ms * interval '1 millisecond', v_now)
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END IF;
    -- A gap-free prefix of the visible messages, as in dx_fetch_orchestration_items.
    WITH got AS MATERIALIZED (
        SELECT q2.id FROM orchestrator_queue q2
        WHERE q2.instance_id = p_instance AND q2.visible_at <= v_now
        ORDER BY q2.id FOR UPDATE SKIP LOCKED),
    gap AS (
        SELECT min(a.id) AS id FROM orchestrator_queue a
        WHERE a.instance_id = p_instance AND a.visible_at <= v_now AND a.id NOT IN (SELECT got.id FROM got))
    UPDATE orchestrator_queue q SET lock_token = v_token, attempt_count = q.attempt_count + 1
    FROM got
    WHERE q.id = got.id AND got.id < COALESCE((SELECT gap.id FROM gap), 9223372036854775807);
    GET DIAGNOSTICS v_tagged = ROW_COUNT;
    IF v_tagged = 0 THEN
        DELETE FROM instance_locks l WHERE l.lock_token = v_token;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT p_instance, v_token, i.instance_id IS NOT NULL, COALESCE(i.orchestration_name, ''),
           COALESCE(i.orchestration_version, ''), COALESCE(i.current_execution_id, 1), e.status,
           i.parent_instance_id, i.custom_status, COALESCE(i.custom_status_version, 0),
           (SELECT COALESCE(max(q.attempt_count), 0)::INT FROM orchestrator_queue q WHERE q.lock_token = v_token),
           ARRAY(SELECT q.id FROM orchestrator_queue q WHERE q.lock_token = v_token ORDER BY q.id),
           ARRAY(SELECT q.work_item FROM orchestrator_queue q WHERE q.lock_token = v_token ORDER BY q.id),
           ARRAY(SELECT h.event_id FROM history h WHERE h.instance_id = p_instance
                 AND h.execution_id = i.current_execution_id ORDER BY h.event_id),
           ARRAY(SELECT h.event_data FROM history h WHERE h.instance_id = p_instance
                 AND h.execution_id = i.current_execution_id ORDER BY h.event_id),
           NULL::BIGINT
    FROM (SELECT 1) AS one
    LEFT JOIN instances i ON i.instance_id = p_instance
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION dx_fetch_instance_item(TEXT, BIGINT);
