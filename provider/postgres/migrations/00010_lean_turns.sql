-- +goose Up
-- Leaner turns (issue 12). Every statement a PL/pgSQL function runs costs an
-- executor start, so the turn's functions run fewer:
-- - the ack checks the lock itself (no nested dx_held_instance call), skips
--   the statements whose arrays are empty, writes `instances` once (names,
--   custom status and the Watch bookkeeping together), writes `executions`
--   only for a new execution or a status, and inserts the worker items it is
--   asked to lease already leased (no UPDATE after it);
-- - the fetches collect the tagged messages from the UPDATE's RETURNING and
--   read history once, instead of five subqueries per instance.
DROP FUNCTION dx_ack_orchestration_item(TEXT, BIGINT, BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT, TEXT, TEXT, TEXT, TEXT, BOOLEAN, TEXT, TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[]);

-- +goose StatementBegin
CREATE FUNCTION dx_ack_orchestration_item(
    p_token TEXT, p_execution_id BIGINT,
    p_event_ids BIGINT[], p_event_kinds TEXT[], p_event_data TEXT[],
    p_worker_instances TEXT[], p_worker_executions BIGINT[], p_worker_activities BIGINT[], p_worker_data TEXT[],
    p_orch_instances TEXT[], p_orch_data TEXT[], p_orch_visible_ms BIGINT[],
    p_status TEXT, p_output TEXT, p_name TEXT, p_version TEXT, p_parent TEXT,
    p_custom_set BOOLEAN, p_custom_value TEXT,
    p_cancel_instances TEXT[], p_cancel_executions BIGINT[], p_cancel_activities BIGINT[],
    p_timer_executions BIGINT[], p_timer_ids BIGINT[],
    -- Positions (1-based, distinct) of the worker items to insert leased to the caller.
    p_lease INT[], p_lease_ms BIGINT
) RETURNS TABLE (instance_id TEXT, status_changed BOOLEAN, orchestrator_pending BOOLEAN,
                 lease_tokens TEXT[], lease_ids BIGINT[], lease_states TEXT[])
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_now      TIMESTAMPTZ := now();
    v_instance TEXT;
    v_until    TIMESTAMPTZ;
    v_current  BIGINT;
    v_new_exec BOOLEAN;
    v_changed  BOOLEAN := false;
    v_rows     INT;
    v_tokens   TEXT[];
    v_ids      BIGINT[];
    v_states   TEXT[];
BEGIN
    SELECT l.instance_id, l.locked_until INTO v_instance, v_until
    FROM instance_locks l WHERE l.lock_token = p_token FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the instance lock is no longer held under this token: it expired and another worker took the instance over, or the turn was already acknowledged or abandoned' USING ERRCODE = 'DX001';
    END IF;
    IF v_until <= v_now THEN
        RAISE EXCEPTION 'lock on instance % expired % ago', v_instance, v_now - v_until USING ERRCODE = 'DX001';
    END IF;

    SELECT i.current_execution_id INTO v_current FROM instances i WHERE i.instance_id = v_instance FOR UPDATE;
    IF NOT FOUND AND COALESCE(p_name, '') = '' THEN
        -- A turn for an instance that was never started may only drop its messages.
        IF COALESCE(cardinality(p_event_ids), 0) > 0 OR p_status IS NOT NULL OR p_custom_set THEN
            RAISE EXCEPTION 'the first turn of instance % must name its orchestration', v_instance USING ERRCODE = 'DX003';
        END IF;
    ELSE
        v_new_exec := v_current IS NULL OR p_execution_id > v_current;
        v_changed := v_new_exec OR p_status IS NOT NULL OR p_custom_set;
        IF v_current IS NULL THEN
            INSERT INTO instances (instance_id, orchestration_name, orchestration_version, current_execution_id,
                                   parent_instance_id, custom_status, custom_status_version, status_seq, status_xid,
                                   created_at, updated_at)
            VALUES (v_instance, p_name, COALESCE(p_version, ''), p_execution_id, NULLIF(p_parent, ''),
                    CASE WHEN p_custom_set THEN p_custom_value END, CASE WHEN p_custom_set THEN 1 ELSE 0 END,
                    nextval('status_seq'), pg_current_xact_id()::TEXT::BIGINT, v_now, v_now);
        ELSE
            UPDATE instances i SET
                current_execution_id = greatest(i.current_execution_id, p_execution_id),
                orchestration_name = COALESCE(NULLIF(p_name, ''), i.orchestration_name),
                orchestration_version = COALESCE(NULLIF(p_version, ''), i.orchestration_version),
                custom_status = CASE WHEN p_custom_set THEN p_custom_value ELSE i.custom_status END,
                custom_status_version = i.custom_status_version + CASE WHEN p_custom_set THEN 1 ELSE 0 END,
                status_seq = CASE WHEN v_changed THEN nextval('status_seq') ELSE i.status_seq END,
                status_xid = CASE WHEN v_changed THEN pg_current_xact_id()::TEXT::BIGINT ELSE i.status_xid END,
                updated_at = v_now
            WHERE i.instance_id = v_instance;
        END IF;
        IF p_status IS NOT NULL THEN
            INSERT INTO executions AS e (instance_id, execution_id, status, output, started_at, completed_at)
            VALUES (v_instance, p_execution_id, p_status, p_output, v_now, CASE WHEN p_status <> 'Running' THEN v_now END)
            ON CONFLICT ON CONSTRAINT executions_pkey DO UPDATE
            SET status = excluded.status, output = excluded.output, completed_at = excluded.completed_at;
        ELSIF v_new_exec THEN
            INSERT INTO executions (instance_id, execution_id, status, started_at)
            VALUES (v_instance, p_execution_id, 'Running', v_now) ON CONFLICT DO NOTHING;
        END IF;
        IF COALESCE(cardinality(p_event_ids), 0) > 0 THEN
            INSERT INTO history (instance_id, execution_id, event_id, event_type, event_data, created_at)
            SELECT v_instance, p_execution_id, u.id, u.kind, u.data, v_now
            FROM unnest(p_event_ids, p_event_kinds, p_event_data) AS u(id, kind, data)
            ON CONFLICT DO NOTHING;
            GET DIAGNOSTICS v_rows = ROW_COUNT;
            IF v_rows < cardinality(p_event_ids) THEN
                RAISE EXCEPTION 'execution % of instance % already has one of events %', p_execution_id, v_instance, p_event_ids
                    USING ERRCODE = 'DX002';
            END IF;
        END IF;
    END IF;

    IF COALESCE(cardinality(p_worker_data), 0) > 0 THEN
        WITH src AS MATERIALIZED (
            SELECT u.inst, u.ex, u.act, u.data, u.pos,
                   CASE WHEN u.pos = ANY (COALESCE(p_lease, '{}')) THEN gen_random_uuid()::text END AS token
            FROM unnest(p_worker_instances, p_worker_executions, p_worker_activities, p_worker_data)
                 WITH ORDINALITY AS u(inst, ex, act, data, pos)),
        ins AS (
            INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, created_at,
                                      lock_token, locked_until, attempt_count)
            SELECT s.inst, s.ex, s.act, s.data, v_now, v_now, s.token,
                   CASE WHEN s.token IS NOT NULL THEN v_now + p_lease_ms * interval '1 millisecond' END,
                   CASE WHEN s.token IS NOT NULL THEN 1 ELSE 0 END
            FROM src s ORDER BY s.pos
            RETURNING worker_queue.id, worker_queue.lock_token)
        SELECT array_agg(i.lock_token ORDER BY l.ord), array_agg(i.id ORDER BY l.ord)
        INTO v_tokens, v_ids
        FROM unnest(p_lease) WITH ORDINALITY AS l(pos, ord)
        LEFT JOIN src s ON s.pos = l.pos
        LEFT JOIN ins i ON i.lock_token = s.token;
    END IF;
    IF COALESCE(cardinality(p_orch_data), 0) > 0 THEN
        INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, created_at)
        SELECT u.inst, u.data, CASE WHEN u.vis > 0 THEN greatest(v_now, to_timestamp(u.vis / 1000.0)) ELSE v_now END, v_now
        FROM unnest(p_orch_instances, p_orch_data, p_orch_visible_ms) AS u(inst, data, vis);
    END IF;
    -- Cancel after enqueueing, so an activity scheduled and cancelled in one turn never runs.
    IF COALESCE(cardinality(p_cancel_activities), 0) > 0 THEN
        DELETE FROM worker_queue w
        USING unnest(p_cancel_instances, p_cancel_executions, p_cancel_activities) AS c(inst, ex, act)
        WHERE w.instance_id = c.inst AND w.execution_id = c.ex AND w.activity_id = c.act;
    END IF;
    -- Timers nobody waits for any more (a lost Select, a finished execution).
    IF COALESCE(cardinality(p_timer_ids), 0) > 0 THEN
        DELETE FROM orchestrator_queue q
        USING unnest(p_timer_executions, p_timer_ids) AS t(ex, id)
        WHERE q.instance_id = v_instance AND q.work_item::jsonb->>'kind' = 'TimerFired'
          AND (q.work_item::jsonb->>'executionId')::BIGINT = t.ex AND (q.work_item::jsonb->>'id')::BIGINT = t.id;
    END IF;
    IF v_ids IS NOT NULL THEN
        -- What the lease reports: the state the turn left its execution in,
        -- and no lease for an item the turn also cancelled.
        SELECT array_agg(CASE WHEN w.id IS NOT NULL THEN t.token END ORDER BY t.ord),
               array_agg(CASE WHEN w.id IS NOT NULL THEN dx_execution_state(w.instance_id, w.execution_id) END ORDER BY t.ord)
        INTO v_tokens, v_states
        FROM unnest(v_tokens, v_ids) WITH ORDINALITY AS t(token, id, ord)
        LEFT JOIN worker_queue w ON w.id = t.id;
    END IF;
    DELETE FROM orchestrator_queue q WHERE q.lock_token = p_token;
    DELETE FROM instance_locks l WHERE l.instance_id = v_instance;
    -- The provider notifies fetchers after commit (NOTIFY inside this
    -- transaction would serialise every commit on the notify queue lock).
    RETURN QUERY SELECT v_instance, v_changed, COALESCE(cardinality(p_orch_data), 0) > 0
        OR EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = v_instance),
        v_tokens, v_ids, v_states;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_fetch_orchestration_items(p_max INT, p_lock_ms BIGINT)
RETURNS TABLE (
    instance_id TEXT, lock_token TEXT, item_exists BOOLEAN, orchestration_name TEXT, orchestration_version TEXT,
    execution_id BIGINT, status TEXT, parent_instance_id TEXT, custom_status TEXT, custom_status_version BIGINT,
    attempt_count INT, message_ids BIGINT[], messages TEXT[], event_ids BIGINT[], events TEXT[],
    next_visible_ms BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    v_now       TIMESTAMPTZ := now();
    v_candidate TEXT;
    v_seen      TEXT[] := '{}';
    v_token     TEXT;
    v_until     TIMESTAMPTZ;
    v_ids       BIGINT[];
    v_items     TEXT[];
    v_attempt   INT;
    v_count     INT := 0;
BEGIN
    -- SKIP LOCKED spreads concurrent fetchers over different messages; the
    -- advisory lock and the lock row make the instance lock exclusive.
    FOR v_candidate IN
        SELECT q.instance_id FROM orchestrator_queue q
        WHERE q.visible_at <= v_now
          AND NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > v_now)
        ORDER BY q.id
        LIMIT p_max * 4
        FOR UPDATE OF q SKIP LOCKED
    LOOP
        CONTINUE WHEN v_candidate = ANY (v_seen);
        v_seen := v_seen || v_candidate;
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtext(current_schema() || '/' || v_candidate));
        v_token := gen_random_uuid()::text;
        -- Never wait for an instance lock row: an acking holder keeps it locked
        -- while it waits for message rows this fetcher may hold (a deadlock).
        SELECT l.locked_until INTO v_until FROM instance_locks l
        WHERE l.instance_id = v_candidate FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
            CONTINUE WHEN v_until > v_now;
            UPDATE instance_locks l SET lock_token = v_token,
                locked_until = v_now + p_lock_ms * interval '1 millisecond', locked_at = v_now
            WHERE l.instance_id = v_candidate;
        ELSE
            -- No row, or a row another transaction holds: only a new row is ours.
            INSERT INTO instance_locks (instance_id, lock_token, locked_until, locked_at)
            VALUES (v_candidate, v_token, v_now + p_lock_ms * interval '1 millisecond', v_now)
            ON CONFLICT DO NOTHING;
            CONTINUE WHEN NOT FOUND;
        END IF;
        -- Tag a gap-free prefix of the visible messages. A message another
        -- transaction holds (a fetcher's scan) and every later one wait for the
        -- next turn: skipping it would deliver messages out of order, or an
        -- event before the StartOrchestration it depends on.
        WITH got AS MATERIALIZED (
            SELECT q2.id FROM orchestrator_queue q2
            WHERE q2.instance_id = v_candidate AND q2.visible_at <= v_now
            ORDER BY q2.id FOR UPDATE SKIP LOCKED),
        gap AS (
            SELECT min(a.id) AS id FROM orchestrator_queue a
            WHERE a.instance_id = v_candidate AND a.visible_at <= v_now AND a.id NOT IN (SELECT got.id FROM got)),
        tagged AS (
            UPDATE orchestrator_queue q SET lock_token = v_token, attempt_count = q.attempt_count + 1
            FROM got
            WHERE q.id = got.id AND got.id < COALESCE((SELECT gap.id FROM gap), 9223372036854775807)
            RETURNING q.id, q.work_item, q.attempt_count)
        SELECT array_agg(t.id ORDER BY t.id), array_agg(t.work_item ORDER BY t.id), max(t.attempt_count)
        INTO v_ids, v_items, v_attempt FROM tagged t;
        IF v_ids IS NULL THEN
            DELETE FROM instance_locks l WHERE l.lock_token = v_token;
            CONTINUE;
        END IF;
        RETURN QUERY
        SELECT v_candidate, v_token, i.instance_id IS NOT NULL, COALESCE(i.orchestration_name, ''),
               COALESCE(i.orchestration_version, ''), COALESCE(i.current_execution_id, 1), e.status,
               i.parent_instance_id, i.custom_status, COALESCE(i.custom_status_version, 0),
               v_attempt, v_ids, v_items, COALESCE(h.ids, '{}'), COALESCE(h.events, '{}'), NULL::BIGINT
        FROM (SELECT 1) AS one
        LEFT JOIN instances i ON i.instance_id = v_candidate
        LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        LEFT JOIN LATERAL (
            SELECT array_agg(h.event_id ORDER BY h.event_id) AS ids, array_agg(h.event_data ORDER BY h.event_id) AS events
            FROM history h WHERE h.instance_id = v_candidate AND h.execution_id = i.current_execution_id) h ON true;
        v_count := v_count + 1;
        EXIT WHEN v_count >= p_max;
    END LOOP;
    IF v_count = 0 THEN
        -- Nothing ready: say when the next delayed message (a timer) is due, so
        -- the caller sleeps until then rather than a whole poll interval.
        RETURN QUERY SELECT NULL::TEXT, NULL::TEXT, NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TEXT,
            NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::INT, NULL::BIGINT[], NULL::TEXT[], NULL::BIGINT[], NULL::TEXT[],
            (SELECT (extract(epoch FROM min(q.visible_at)) * 1000)::BIGINT FROM orchestrator_queue q WHERE q.visible_at > v_now);
    END IF;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_fetch_instance_item(p_instance TEXT, p_lock_ms BIGINT)
RETURNS TABLE (
    instance_id TEXT, lock_token TEXT, item_exists BOOLEAN, orchestration_name TEXT, orchestration_version TEXT,
    execution_id BIGINT, status TEXT, parent_instance_id TEXT, custom_status TEXT, custom_status_version BIGINT,
    attempt_count INT, message_ids BIGINT[], messages TEXT[], event_ids BIGINT[], events TEXT[],
    next_visible_ms BIGINT
) LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_now     TIMESTAMPTZ := now();
    v_token   TEXT := gen_random_uuid()::text;
    v_until   TIMESTAMPTZ;
    v_ids     BIGINT[];
    v_items   TEXT[];
    v_attempt INT;
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
        WHERE a.instance_id = p_instance AND a.visible_at <= v_now AND a.id NOT IN (SELECT got.id FROM got)),
    tagged AS (
        UPDATE orchestrator_queue q SET lock_token = v_token, attempt_count = q.attempt_count + 1
        FROM got
        WHERE q.id = got.id AND got.id < COALESCE((SELECT gap.id FROM gap), 9223372036854775807)
        RETURNING q.id, q.work_item, q.attempt_count)
    SELECT array_agg(t.id ORDER BY t.id), array_agg(t.work_item ORDER BY t.id), max(t.attempt_count)
    INTO v_ids, v_items, v_attempt FROM tagged t;
    IF v_ids IS NULL THEN
        DELETE FROM instance_locks l WHERE l.lock_token = v_token;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT p_instance, v_token, i.instance_id IS NOT NULL, COALESCE(i.orchestration_name, ''),
           COALESCE(i.orchestration_version, ''), COALESCE(i.current_execution_id, 1), e.status,
           i.parent_instance_id, i.custom_status, COALESCE(i.custom_status_version, 0),
           v_attempt, v_ids, v_items, COALESCE(h.ids, '{}'), COALESCE(h.events, '{}'), NULL::BIGINT
    FROM (SELECT 1) AS one
    LEFT JOIN instances i ON i.instance_id = p_instance
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    LEFT JOIN LATERAL (
        SELECT array_agg(h.event_id ORDER BY h.event_id) AS ids, array_agg(h.event_data ORDER BY h.event_id) AS events
        FROM history h WHERE h.instance_id = p_instance AND h.execution_id = i.current_execution_id) h ON true;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- The functions as migrations 00001, 00003, 00007 and 00009 left them.
DROP FUNCTION dx_ack_orchestration_item(TEXT, BIGINT, BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT, TEXT, TEXT, TEXT, TEXT, BOOLEAN, TEXT, TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], INT[], BIGINT);

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
) RETURNS TABLE (status_changed BOOLEAN, orchestrator_pending BOOLEAN)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_fetch_orchestration_items(p_max INT, p_lock_ms BIGINT)
RETURNS TABLE (
    instance_id TEXT, lock_token TEXT, item_exists BOOLEAN, orchestration_name TEXT, orchestration_version TEXT,
    execution_id BIGINT, status TEXT, parent_instance_id TEXT, custom_status TEXT, custom_status_version BIGINT,
    attempt_count INT, message_ids BIGINT[], messages TEXT[], event_ids BIGINT[], events TEXT[],
    next_visible_ms BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    v_now       TIMESTAMPTZ := now();
    v_candidate TEXT;
    v_seen      TEXT[] := '{}';
    v_token     TEXT;
    v_until     TIMESTAMPTZ;
    v_tagged    INT;
    v_count     INT := 0;
BEGIN
    -- SKIP LOCKED spreads concurrent fetchers over different messages; the
    -- advisory lock and the lock row make the instance lock exclusive.
    FOR v_candidate IN
        SELECT q.instance_id FROM orchestrator_queue q
        WHERE q.visible_at <= v_now
          AND NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > v_now)
        ORDER BY q.id
        LIMIT p_max * 4
        FOR UPDATE OF q SKIP LOCKED
    LOOP
        CONTINUE WHEN v_candidate = ANY (v_seen);
        v_seen := v_seen || v_candidate;
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtext(current_schema() || '/' || v_candidate));
        v_token := gen_random_uuid()::text;
        -- Never wait for an instance lock row: an acking holder keeps it locked
        -- while it waits for message rows this fetcher may hold (a deadlock).
        SELECT l.locked_until INTO v_until FROM instance_locks l
        WHERE l.instance_id = v_candidate FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
            CONTINUE WHEN v_until > v_now;
            UPDATE instance_locks l SET lock_token = v_token,
                locked_until = v_now + p_lock_ms * interval '1 millisecond', locked_at = v_now
            WHERE l.instance_id = v_candidate;
        ELSE
            -- No row, or a row another transaction holds: only a new row is ours.
            INSERT INTO instance_locks (instance_id, lock_token, locked_until, locked_at)
            VALUES (v_candidate, v_token, v_now + p_lock_ms * interval '1 millisecond', v_now)
            ON CONFLICT DO NOTHING;
            CONTINUE WHEN NOT FOUND;
        END IF;
        -- Tag a gap-free prefix of the visible messages. A message another
        -- transaction holds (a fetcher's scan) and every later one wait for the
        -- next turn: skipping it would deliver messages out of order, or an
        -- event before the StartOrchestration it depends on.
        WITH got AS MATERIALIZED (
            SELECT q2.id FROM orchestrator_queue q2
            WHERE q2.instance_id = v_candidate AND q2.visible_at <= v_now
            ORDER BY q2.id FOR UPDATE SKIP LOCKED),
        gap AS (
            SELECT min(a.id) AS id FROM orchestrator_queue a
            WHERE a.instance_id = v_candidate AND a.visible_at <= v_now AND a.id NOT IN (SELECT got.id FROM got))
        UPDATE orchestrator_queue q SET lock_token = v_token, attempt_count = q.attempt_count + 1
        FROM got
        WHERE q.id = got.id AND got.id < COALESCE((SELECT gap.id FROM gap), 9223372036854775807);
        GET DIAGNOSTICS v_tagged = ROW_COUNT;
        IF v_tagged = 0 THEN
            DELETE FROM instance_locks l WHERE l.lock_token = v_token;
            CONTINUE;
        END IF;
        RETURN QUERY
        SELECT v_candidate, v_token, i.instance_id IS NOT NULL, COALESCE(i.orchestration_name, ''),
               COALESCE(i.orchestration_version, ''), COALESCE(i.current_execution_id, 1), e.status,
               i.parent_instance_id, i.custom_status, COALESCE(i.custom_status_version, 0),
               (SELECT COALESCE(max(q.attempt_count), 0)::INT FROM orchestrator_queue q WHERE q.lock_token = v_token),
               ARRAY(SELECT q.id FROM orchestrator_queue q WHERE q.lock_token = v_token ORDER BY q.id),
               ARRAY(SELECT q.work_item FROM orchestrator_queue q WHERE q.lock_token = v_token ORDER BY q.id),
               ARRAY(SELECT h.event_id FROM history h WHERE h.instance_id = v_candidate
                     AND h.execution_id = i.current_execution_id ORDER BY h.event_id),
               ARRAY(SELECT h.event_data FROM history h WHERE h.instance_id = v_candidate
                     AND h.execution_id = i.current_execution_id ORDER BY h.event_id),
               NULL::BIGINT
        FROM (SELECT 1) AS one
        LEFT JOIN instances i ON i.instance_id = v_candidate
        LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id;
        v_count := v_count + 1;
        EXIT WHEN v_count >= p_max;
    END LOOP;
    IF v_count = 0 THEN
        -- Nothing ready: say when the next delayed message (a timer) is due, so
        -- the caller sleeps until then rather than a whole poll interval.
        RETURN QUERY SELECT NULL::TEXT, NULL::TEXT, NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TEXT,
            NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::INT, NULL::BIGINT[], NULL::TEXT[], NULL::BIGINT[], NULL::TEXT[],
            (SELECT (extract(epoch FROM min(q.visible_at)) * 1000)::BIGINT FROM orchestrator_queue q WHERE q.visible_at > v_now);
    END IF;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION dx_fetch_instance_item(p_instance TEXT, p_lock_ms BIGINT)
RETURNS TABLE (
    instance_id TEXT, lock_token TEXT, item_exists BOOLEAN, orchestration_name TEXT, orchestration_version TEXT,
    execution_id BIGINT, status TEXT, parent_instance_id TEXT, custom_status TEXT, custom_status_version BIGINT,
    attempt_count INT, message_ids BIGINT[], messages TEXT[], event_ids BIGINT[], events TEXT[],
    next_visible_ms BIGINT
) LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
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
