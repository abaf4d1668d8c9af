-- +goose Up
-- The ack deletes the timers a turn cancelled (CancelledTimers).
DROP FUNCTION dx_ack_orchestration_item(TEXT, BIGINT, BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT, TEXT, TEXT, TEXT, TEXT, BOOLEAN, TEXT, TEXT[], BIGINT[], BIGINT[]);

-- +goose StatementBegin
CREATE FUNCTION dx_ack_orchestration_item(
    p_token TEXT, p_execution_id BIGINT,
    p_event_ids BIGINT[], p_event_kinds TEXT[], p_event_data TEXT[],
    p_worker_instances TEXT[], p_worker_executions BIGINT[], p_worker_activities BIGINT[], p_worker_data TEXT[],
    p_orch_instances TEXT[], p_orch_data TEXT[], p_orch_visible_ms BIGINT[],
    p_status TEXT, p_output TEXT, p_name TEXT, p_version TEXT, p_parent TEXT,
    p_custom_set BOOLEAN, p_custom_value TEXT,
    p_cancel_instances TEXT[], p_cancel_executions BIGINT[], p_cancel_activities BIGINT[],
    p_timer_executions BIGINT[], p_timer_ids BIGINT[]
) RETURNS TABLE (status_changed BOOLEAN, orchestrator_pending BOOLEAN) LANGUAGE plpgsql AS $$
DECLARE
    v_now      TIMESTAMPTZ := now();
    v_instance TEXT := dx_held_instance(p_token);
    v_current  BIGINT;
    v_changed  BOOLEAN := false;
    v_rows     INT;
BEGIN
    SELECT i.current_execution_id INTO v_current FROM instances i WHERE i.instance_id = v_instance FOR UPDATE;
    IF NOT FOUND AND COALESCE(p_name, '') = '' THEN
        -- A turn for an instance that was never started may only drop its messages.
        IF COALESCE(cardinality(p_event_ids), 0) > 0 OR p_status IS NOT NULL OR p_custom_set THEN
            RAISE EXCEPTION 'the first turn of instance % must name its orchestration', v_instance USING ERRCODE = 'DX003';
        END IF;
    ELSE
        IF v_current IS NULL THEN
            INSERT INTO instances (instance_id, orchestration_name, orchestration_version, current_execution_id,
                                   parent_instance_id, created_at, updated_at)
            VALUES (v_instance, p_name, COALESCE(p_version, ''), p_execution_id, NULLIF(p_parent, ''), v_now, v_now);
            v_changed := true;
        ELSE
            UPDATE instances i SET
                current_execution_id = greatest(i.current_execution_id, p_execution_id),
                orchestration_name = COALESCE(NULLIF(p_name, ''), i.orchestration_name),
                orchestration_version = COALESCE(NULLIF(p_version, ''), i.orchestration_version),
                updated_at = v_now
            WHERE i.instance_id = v_instance;
            v_changed := p_execution_id > v_current;
        END IF;
        INSERT INTO executions (instance_id, execution_id, status, started_at)
        VALUES (v_instance, p_execution_id, 'Running', v_now) ON CONFLICT DO NOTHING;
        INSERT INTO history (instance_id, execution_id, event_id, event_type, event_data, created_at)
        SELECT v_instance, p_execution_id, u.id, u.kind, u.data, v_now
        FROM unnest(p_event_ids, p_event_kinds, p_event_data) AS u(id, kind, data)
        ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        IF v_rows < COALESCE(cardinality(p_event_ids), 0) THEN
            RAISE EXCEPTION 'execution % of instance % already has one of events %', p_execution_id, v_instance, p_event_ids
                USING ERRCODE = 'DX002';
        END IF;
        IF p_status IS NOT NULL THEN
            UPDATE executions e SET status = p_status, output = p_output,
                completed_at = CASE WHEN p_status <> 'Running' THEN v_now END
            WHERE e.instance_id = v_instance AND e.execution_id = p_execution_id;
            v_changed := true;
        END IF;
        IF p_custom_set THEN
            UPDATE instances i SET custom_status = p_custom_value, custom_status_version = i.custom_status_version + 1
            WHERE i.instance_id = v_instance;
            v_changed := true;
        END IF;
        IF v_changed THEN
            UPDATE instances i SET status_seq = nextval('status_seq'), status_xid = pg_current_xact_id()::TEXT::BIGINT
            WHERE i.instance_id = v_instance;
        END IF;
    END IF;

    INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, created_at)
    SELECT u.inst, u.ex, u.act, u.data, v_now, v_now
    FROM unnest(p_worker_instances, p_worker_executions, p_worker_activities, p_worker_data) AS u(inst, ex, act, data);
    INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, created_at)
    SELECT u.inst, u.data, CASE WHEN u.vis > 0 THEN greatest(v_now, to_timestamp(u.vis / 1000.0)) ELSE v_now END, v_now
    FROM unnest(p_orch_instances, p_orch_data, p_orch_visible_ms) AS u(inst, data, vis);
    -- Cancel after enqueueing, so an activity scheduled and cancelled in one turn never runs.
    DELETE FROM worker_queue w
    USING unnest(p_cancel_instances, p_cancel_executions, p_cancel_activities) AS c(inst, ex, act)
    WHERE w.instance_id = c.inst AND w.execution_id = c.ex AND w.activity_id = c.act;
    -- Timers nobody waits for any more (a lost Select, a finished execution).
    IF COALESCE(cardinality(p_timer_ids), 0) > 0 THEN
        DELETE FROM orchestrator_queue q
        USING unnest(p_timer_executions, p_timer_ids) AS t(ex, id)
        WHERE q.instance_id = v_instance AND q.work_item::jsonb->>'kind' = 'TimerFired'
          AND (q.work_item::jsonb->>'executionId')::BIGINT = t.ex AND (q.work_item::jsonb->>'id')::BIGINT = t.id;
    END IF;
    DELETE FROM orchestrator_queue q WHERE q.lock_token = p_token;
    DELETE FROM instance_locks l WHERE l.lock_token = p_token;
    -- The provider notifies fetchers after commit (NOTIFY inside this
    -- transaction would serialise every commit on the notify queue lock).
    RETURN QUERY SELECT v_changed, COALESCE(cardinality(p_orch_data), 0) > 0
        OR EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = v_instance);
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION dx_ack_orchestration_item(TEXT, BIGINT, BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT, TEXT, TEXT, TEXT, TEXT, BOOLEAN, TEXT, TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[]);

-- +goose StatementBegin
CREATE FUNCTION dx_ack_orchestration_item(
    p_token TEXT, p_execution_id BIGINT,
    p_event_ids BIGINT[], p_event_kinds TEXT[], p_event_data TEXT[],
    p_worker_instances TEXT[], p_worker_executions BIGINT[], p_worker_activities BIGINT[], p_worker_data TEXT[],
    p_orch_instances TEXT[], p_orch_data TEXT[], p_orch_visible_ms BIGINT[],
    p_status TEXT, p_output TEXT, p_name TEXT, p_version TEXT, p_parent TEXT,
    p_custom_set BOOLEAN, p_custom_value TEXT,
    p_cancel_instances TEXT[], p_cancel_executions BIGINT[], p_cancel_activities BIGINT[]
) RETURNS TABLE (status_changed BOOLEAN, orchestrator_pending BOOLEAN) LANGUAGE plpgsql AS $$
DECLARE
    v_now      TIMESTAMPTZ := now();
    v_instance TEXT := dx_held_instance(p_token);
    v_current  BIGINT;
    v_changed  BOOLEAN := false;
    v_rows     INT;
BEGIN
    SELECT i.current_execution_id INTO v_current FROM instances i WHERE i.instance_id = v_instance FOR UPDATE;
    IF NOT FOUND AND COALESCE(p_name, '') = '' THEN
        -- A turn for an instance that was never started may only drop its messages.
        IF COALESCE(cardinality(p_event_ids), 0) > 0 OR p_status IS NOT NULL OR p_custom_set THEN
            RAISE EXCEPTION 'the first turn of instance % must name its orchestration', v_instance USING ERRCODE = 'DX003';
        END IF;
    ELSE
        IF v_current IS NULL THEN
            INSERT INTO instances (instance_id, orchestration_name, orchestration_version, current_execution_id,
                                   parent_instance_id, created_at, updated_at)
            VALUES (v_instance, p_name, COALESCE(p_version, ''), p_execution_id, NULLIF(p_parent, ''), v_now, v_now);
            v_changed := true;
        ELSE
            UPDATE instances i SET
                current_execution_id = greatest(i.current_execution_id, p_execution_id),
                orchestration_name = COALESCE(NULLIF(p_name, ''), i.orchestration_name),
                orchestration_version = COALESCE(NULLIF(p_version, ''), i.orchestration_version),
                updated_at = v_now
            WHERE i.instance_id = v_instance;
            v_changed := p_execution_id > v_current;
        END IF;
        INSERT INTO executions (instance_id, execution_id, status, started_at)
        VALUES (v_instance, p_execution_id, 'Running', v_now) ON CONFLICT DO NOTHING;
        INSERT INTO history (instance_id, execution_id, event_id, event_type, event_data, created_at)
        SELECT v_instance, p_execution_id, u.id, u.kind, u.data, v_now
        FROM unnest(p_event_ids, p_event_kinds, p_event_data) AS u(id, kind, data)
        ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        IF v_rows < COALESCE(cardinality(p_event_ids), 0) THEN
            RAISE EXCEPTION 'execution % of instance % already has one of events %', p_execution_id, v_instance, p_event_ids
                USING ERRCODE = 'DX002';
        END IF;
        IF p_status IS NOT NULL THEN
            UPDATE executions e SET status = p_status, output = p_output,
                completed_at = CASE WHEN p_status <> 'Running' THEN v_now END
            WHERE e.instance_id = v_instance AND e.execution_id = p_execution_id;
            v_changed := true;
        END IF;
        IF p_custom_set THEN
            UPDATE instances i SET custom_status = p_custom_value, custom_status_version = i.custom_status_version + 1
            WHERE i.instance_id = v_instance;
            v_changed := true;
        END IF;
        IF v_changed THEN
            UPDATE instances i SET status_seq = nextval('status_seq'), status_xid = pg_current_xact_id()::TEXT::BIGINT
            WHERE i.instance_id = v_instance;
        END IF;
    END IF;

    INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, created_at)
    SELECT u.inst, u.ex, u.act, u.data, v_now, v_now
    FROM unnest(p_worker_instances, p_worker_executions, p_worker_activities, p_worker_data) AS u(inst, ex, act, data);
    INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, created_at)
    SELECT u.inst, u.data, CASE WHEN u.vis > 0 THEN greatest(v_now, to_timestamp(u.vis / 1000.0)) ELSE v_now END, v_now
    FROM unnest(p_orch_instances, p_orch_data, p_orch_visible_ms) AS u(inst, data, vis);
    -- Cancel after enqueueing, so an activity scheduled and cancelled in one turn never runs.
    DELETE FROM worker_queue w
    USING unnest(p_cancel_instances, p_cancel_executions, p_cancel_activities) AS c(inst, ex, act)
    WHERE w.instance_id = c.inst AND w.execution_id = c.ex AND w.activity_id = c.act;
    DELETE FROM orchestrator_queue q WHERE q.lock_token = p_token;
    DELETE FROM instance_locks l WHERE l.lock_token = p_token;
    -- The provider notifies fetchers after commit (NOTIFY inside this
    -- transaction would serialise every commit on the notify queue lock).
    RETURN QUERY SELECT v_changed, COALESCE(cardinality(p_orch_data), 0) > 0
        OR EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = v_instance);
END;
$$;
-- +goose StatementEnd
