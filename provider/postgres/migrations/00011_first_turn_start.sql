-- +goose Up
-- Direct start (issue 12): the process starting an instance commits its
-- first turn as the start, with no start message queued. This takes the
-- lock a fetch would take, under the caller's token, for an instance that
-- does not exist, is not locked and has nothing queued, so the ack of the
-- same transaction commits the turn. Otherwise it raises DX007 and the
-- caller queues the start instead. The lock comes first: a concurrent
-- direct start of the same instance waits on it, and the checks after it
-- then see that start's commit.
-- +goose StatementBegin
CREATE FUNCTION dx_lock_new_instance(p_instance TEXT, p_token TEXT, p_lock_ms BIGINT) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
    v_now TIMESTAMPTZ := now();
BEGIN
    INSERT INTO instance_locks AS l (instance_id, lock_token, locked_until, locked_at)
    VALUES (p_instance, p_token, v_now + p_lock_ms * interval '1 millisecond', v_now)
    ON CONFLICT (instance_id) DO UPDATE
        SET lock_token = EXCLUDED.lock_token, locked_until = EXCLUDED.locked_until, locked_at = EXCLUDED.locked_at
        WHERE l.locked_until <= v_now;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'instance % is locked by a turn', p_instance USING ERRCODE = 'DX007';
    END IF;
    IF EXISTS (SELECT 1 FROM instances i WHERE i.instance_id = p_instance)
       OR EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = p_instance) THEN
        RAISE EXCEPTION 'instance % exists or has messages queued', p_instance USING ERRCODE = 'DX007';
    END IF;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION dx_lock_new_instance(TEXT, TEXT, BIGINT);
