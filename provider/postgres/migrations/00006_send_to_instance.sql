-- +goose Up
-- A client's message (event, cancel, terminate) is queued only for an instance
-- that can still read it: running, or with a start queued. DX004 otherwise
-- (no such instance), DX006 when its current execution has ended.

-- +goose StatementBegin
CREATE FUNCTION dx_start_queued(p_instance TEXT) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM orchestrator_queue q
                   WHERE q.instance_id = p_instance AND (q.work_item::jsonb ->> 'kind') = 'StartOrchestration');
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION dx_instance_status(p_instance TEXT) RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT COALESCE(e.status, 'Running') FROM instances i
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    WHERE i.instance_id = p_instance;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION dx_send_to_instance(p_instance TEXT, p_data TEXT)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    v_status TEXT := dx_instance_status(p_instance);
BEGIN
    -- Each statement reads a new snapshot: a start consumed between the two
    -- reads has created the instance, so look at the instance once more.
    IF v_status IS NULL AND NOT dx_start_queued(p_instance) THEN
        v_status := dx_instance_status(p_instance);
        IF v_status IS NULL THEN
            RAISE EXCEPTION 'instance % does not exist and is not being started', p_instance USING ERRCODE = 'DX004';
        END IF;
    END IF;
    IF v_status <> 'Running' THEN
        RAISE EXCEPTION 'it is %', v_status USING ERRCODE = 'DX006';
    END IF;
    INSERT INTO orchestrator_queue (instance_id, work_item, visible_at) VALUES (p_instance, p_data, now());
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION dx_send_to_instance(TEXT, TEXT);
DROP FUNCTION dx_instance_status(TEXT);
DROP FUNCTION dx_start_queued(TEXT);
