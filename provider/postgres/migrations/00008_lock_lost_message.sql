-- +goose Up
-- A token whose lock row is gone most often means the lock expired and
-- another worker took the instance over (the row now carries its token): say
-- that first, rather than "unknown".

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_held_instance(p_token TEXT) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
    v_instance TEXT;
    v_until    TIMESTAMPTZ;
BEGIN
    SELECT l.instance_id, l.locked_until INTO v_instance, v_until
    FROM instance_locks l WHERE l.lock_token = p_token FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the instance lock is no longer held under this token: it expired and another worker took the instance over, or the turn was already acknowledged or abandoned' USING ERRCODE = 'DX001';
    END IF;
    IF v_until <= now() THEN
        RAISE EXCEPTION 'lock on instance % expired % ago', v_instance, now() - v_until USING ERRCODE = 'DX001';
    END IF;
    RETURN v_instance;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_held_instance(p_token TEXT) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
    v_instance TEXT;
    v_until    TIMESTAMPTZ;
BEGIN
    SELECT l.instance_id, l.locked_until INTO v_instance, v_until
    FROM instance_locks l WHERE l.lock_token = p_token FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lock token is unknown or was already released' USING ERRCODE = 'DX001';
    END IF;
    IF v_until <= now() THEN
        RAISE EXCEPTION 'lock on instance % expired % ago', v_instance, now() - v_until USING ERRCODE = 'DX001';
    END IF;
    RETURN v_instance;
END;
$$;
-- +goose StatementEnd
