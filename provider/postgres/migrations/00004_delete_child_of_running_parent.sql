-- +goose Up
-- A forced delete of a sub-orchestration is refused while its parent runs:
-- the parent waits for the child and would never hear from it again.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_delete_tree(p_root TEXT, p_force BOOLEAN, p_bulk BOOLEAN,
    INOUT instances_deleted BIGINT, INOUT executions_deleted BIGINT, INOUT events_deleted BIGINT, INOUT messages_deleted BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_parent  TEXT;
    v_ids     TEXT[];
    v_running TEXT[];
    v_rows    BIGINT;
BEGIN
    SELECT i.parent_instance_id INTO v_parent FROM instances i WHERE i.instance_id = p_root FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'instance % does not exist', p_root USING ERRCODE = 'DX004';
    END IF;
    IF v_parent IS NOT NULL AND NOT p_force THEN
        RAISE EXCEPTION 'instance % is a sub-orchestration of %; delete the root instance, or force', p_root, v_parent
            USING ERRCODE = 'DX003';
    END IF;
    IF v_parent IS NOT NULL AND EXISTS (
        SELECT 1 FROM instances i LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        WHERE i.instance_id = v_parent AND COALESCE(e.status, 'Running') NOT IN ('Completed', 'Failed', 'Terminated')) THEN
        RAISE EXCEPTION 'instance % is a sub-orchestration of %, which is running and waits for it; terminate or delete the root instead',
            p_root, v_parent USING ERRCODE = 'DX005';
    END IF;
    SELECT array_agg(d.instance_id) INTO v_ids FROM dx_descendants(p_root) d;
    IF NOT p_force THEN
        SELECT array_agg(i.instance_id ORDER BY i.instance_id) INTO v_running
        FROM instances i LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        WHERE i.instance_id = ANY (v_ids) AND COALESCE(e.status, 'Running') NOT IN ('Completed', 'Failed', 'Terminated');
        IF v_running IS NOT NULL THEN
            IF p_bulk THEN
                RETURN;
            END IF;
            RAISE EXCEPTION 'instance %: % not finished; use force to delete anyway', p_root, array_to_string(v_running, ', ')
                USING ERRCODE = 'DX005';
        END IF;
    END IF;
    DELETE FROM history h WHERE h.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; events_deleted := events_deleted + v_rows;
    DELETE FROM executions e WHERE e.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; executions_deleted := executions_deleted + v_rows;
    DELETE FROM orchestrator_queue q WHERE q.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; messages_deleted := messages_deleted + v_rows;
    DELETE FROM worker_queue w WHERE w.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; messages_deleted := messages_deleted + v_rows;
    -- Removing the lock makes an in-flight ack fail instead of recreating the instance.
    DELETE FROM instance_locks l WHERE l.instance_id = ANY (v_ids);
    DELETE FROM instances i WHERE i.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; instances_deleted := instances_deleted + v_rows;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_delete_tree(p_root TEXT, p_force BOOLEAN, p_bulk BOOLEAN,
    INOUT instances_deleted BIGINT, INOUT executions_deleted BIGINT, INOUT events_deleted BIGINT, INOUT messages_deleted BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_parent  TEXT;
    v_ids     TEXT[];
    v_running TEXT[];
    v_rows    BIGINT;
BEGIN
    SELECT i.parent_instance_id INTO v_parent FROM instances i WHERE i.instance_id = p_root FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'instance % does not exist', p_root USING ERRCODE = 'DX004';
    END IF;
    IF v_parent IS NOT NULL AND NOT p_force THEN
        RAISE EXCEPTION 'instance % is a sub-orchestration of %; delete the root instance, or force', p_root, v_parent
            USING ERRCODE = 'DX003';
    END IF;
    SELECT array_agg(d.instance_id) INTO v_ids FROM dx_descendants(p_root) d;
    IF NOT p_force THEN
        SELECT array_agg(i.instance_id ORDER BY i.instance_id) INTO v_running
        FROM instances i LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        WHERE i.instance_id = ANY (v_ids) AND COALESCE(e.status, 'Running') NOT IN ('Completed', 'Failed', 'Terminated');
        IF v_running IS NOT NULL THEN
            IF p_bulk THEN
                RETURN;
            END IF;
            RAISE EXCEPTION 'instance %: % not finished; use force to delete anyway', p_root, array_to_string(v_running, ', ')
                USING ERRCODE = 'DX005';
        END IF;
    END IF;
    DELETE FROM history h WHERE h.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; events_deleted := events_deleted + v_rows;
    DELETE FROM executions e WHERE e.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; executions_deleted := executions_deleted + v_rows;
    DELETE FROM orchestrator_queue q WHERE q.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; messages_deleted := messages_deleted + v_rows;
    DELETE FROM worker_queue w WHERE w.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; messages_deleted := messages_deleted + v_rows;
    -- Removing the lock makes an in-flight ack fail instead of recreating the instance.
    DELETE FROM instance_locks l WHERE l.instance_id = ANY (v_ids);
    DELETE FROM instances i WHERE i.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; instances_deleted := instances_deleted + v_rows;
END;
$$;
-- +goose StatementEnd
