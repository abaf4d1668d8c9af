-- +goose Up
-- Why an instance's last turn was handed back (provider.InstanceInfo.LastError).
-- It lives on the lock row, which a committed turn deletes.
ALTER TABLE instance_locks ADD COLUMN last_error TEXT;
DROP FUNCTION dx_abandon_orchestration_item(TEXT, BIGINT, BOOLEAN);

-- +goose StatementBegin
CREATE FUNCTION dx_abandon_orchestration_item(p_token TEXT, p_delay_ms BIGINT, p_ignore_attempt BOOLEAN, p_error TEXT)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    v_instance TEXT := dx_held_instance(p_token);
BEGIN
    UPDATE orchestrator_queue q SET lock_token = NULL,
        attempt_count = CASE WHEN p_ignore_attempt THEN greatest(q.attempt_count - 1, 0) ELSE q.attempt_count END
    WHERE q.lock_token = p_token;
    IF p_delay_ms > 0 THEN
        -- Keep the instance unfetchable for the delay under a token nobody holds.
        UPDATE instance_locks l SET lock_token = 'abandoned-' || gen_random_uuid()::text,
            locked_until = now() + p_delay_ms * interval '1 millisecond', last_error = p_error
        WHERE l.lock_token = p_token;
    ELSE
        DELETE FROM instance_locks l WHERE l.lock_token = p_token;
    END IF;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION dx_abandon_orchestration_item(TEXT, BIGINT, BOOLEAN, TEXT);

-- +goose StatementBegin
CREATE FUNCTION dx_abandon_orchestration_item(p_token TEXT, p_delay_ms BIGINT, p_ignore_attempt BOOLEAN)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    v_instance TEXT := dx_held_instance(p_token);
BEGIN
    UPDATE orchestrator_queue q SET lock_token = NULL,
        attempt_count = CASE WHEN p_ignore_attempt THEN greatest(q.attempt_count - 1, 0) ELSE q.attempt_count END
    WHERE q.lock_token = p_token;
    IF p_delay_ms > 0 THEN
        UPDATE instance_locks l SET lock_token = 'abandoned-' || gen_random_uuid()::text,
            locked_until = now() + p_delay_ms * interval '1 millisecond'
        WHERE l.lock_token = p_token;
    ELSE
        DELETE FROM instance_locks l WHERE l.lock_token = p_token;
    END IF;
END;
$$;
-- +goose StatementEnd
ALTER TABLE instance_locks DROP COLUMN last_error;
