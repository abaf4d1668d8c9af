-- duroxide:generation 10
-- The store's SQL functions, applied as one unit (see functions.go): when
-- this file's generation (above) is newer than the one recorded in
-- schema_functions, the runtime drops every dx_ function of the schema and
-- runs this file, in one transaction, under the migration lock; an older
-- process never replaces newer functions. Raise the generation by one with
-- every change (TestFunctionsGenerationRecorded holds it to the file's
-- SHA-256), and keep the previous generation's callers working: during a
-- rolling upgrade, older processes call these functions. Tables, indexes and sequences stay in
-- the numbered migrations; a function is changed by editing it here.
--
-- Objects are found through search_path: every connection of the provider
-- sets it to the provider's schema. Functions keep every contract operation
-- to one round trip; they raise SQLSTATE DX001..DX009 for the contract's
-- errors (lock not held, duplicate event, invalid argument, not found,
-- running, ended, refused first turn, stale cached turn, ID taken). They never NOTIFY: the provider does,
-- after commit (see notify.go). Functions whose statements all look rows up
-- by key use plan_cache_mode = force_generic_plan: PostgreSQL re-plans a
-- parameterised statement until a generic plan looks cheap enough, which for
-- array parameters it never does.

-- Every dx_ function goes first, so a signature or return type may change and
-- a function removed from this file does not linger.
DO $$
DECLARE
    v_fn REGPROCEDURE;
BEGIN
    FOR v_fn IN SELECT p.oid::regprocedure FROM pg_proc p
                WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'dx\_%'
    LOOP
        EXECUTE 'DROP FUNCTION ' || v_fn::text;
    END LOOP;
END $$;

CREATE FUNCTION dx_execution_state(p_instance TEXT, p_execution BIGINT) RETURNS TEXT LANGUAGE plpgsql STABLE AS $$
-- PL/pgSQL rather than SQL: it caches its plan per session; a SQL function
-- called from RETURNING is planned anew on every call.
DECLARE
    v_current BIGINT;
    v_status  TEXT;
BEGIN
    SELECT i.current_execution_id, e.status INTO v_current, v_status
    FROM instances i
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    WHERE i.instance_id = p_instance;
    IF NOT FOUND THEN
        RETURN 'Missing';
    END IF;
    IF p_execution < v_current THEN
        RETURN 'ContinuedAsNew';
    END IF;
    RETURN COALESCE(v_status, 'Running');
END;
$$;

-- Fetches take the ready instances' turns through dx_fetch_instance_items.
-- With p_cap_keys (provider.Capability.Keys: name, U+001F, version) and
-- p_cap_names, an instance is a candidate only when it runs an
-- orchestration and pinned version the keys hold (any version of the names,
-- when none is pinned) or, not created yet, its queued start asks for one
-- (any version of the names, when it asks for none); a message for no
-- instance and no start is admitted (its turn drops it). The filter runs in
-- the scan, so what it skips is never locked. Generation 2 callers pass
-- none.
CREATE FUNCTION dx_fetch_orchestration_items(p_max INT, p_lock_ms BIGINT, p_exclude TEXT[],
                                             p_cap_keys TEXT[] DEFAULT NULL, p_cap_names TEXT[] DEFAULT NULL)
RETURNS TABLE (
    instance_id TEXT, lock_token TEXT, item_exists BOOLEAN, orchestration_name TEXT, orchestration_version TEXT,
    execution_id BIGINT, status TEXT, parent_instance_id TEXT, custom_status TEXT, custom_status_version BIGINT,
    attempt_count INT, message_ids BIGINT[], messages TEXT[], event_ids BIGINT[], events TEXT[],
    next_visible_ms BIGINT, incarnation BIGINT, history_after BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    v_now        TIMESTAMPTZ := now();
    v_candidates TEXT[];
BEGIN
    -- SKIP LOCKED spreads concurrent fetchers over different messages; the
    -- candidates are the instances of the first ready messages, in the order
    -- they became visible: on the (visible_at, id) index the scan reads only
    -- visible rows, however many timers sleep (in id order it could walk them).
    -- p_exclude are instances whose turns the caller is about to commit from
    -- its cache (cached timer turns in flight), or whose timers it will take
    -- as they fall due: locking one would make its turn stale. NOT IN over a
    -- subquery is one hash lookup per row; <> ALL compared every element.
    SELECT array_agg(c.instance_id ORDER BY c.first_visible, c.first_id) INTO v_candidates
    FROM (SELECT s.instance_id, min(s.visible_at) AS first_visible, min(s.id) AS first_id
          -- The capability is checked only for messages of unlocked
          -- instances (CASE fixes the order), by lookups on keys: a join to
          -- instances would be planned, generically, as a hash of the table,
          -- and a backlog of locked instances' messages is scanned in full.
          FROM (SELECT q.instance_id, q.id, q.visible_at FROM orchestrator_queue q
                WHERE q.visible_at <= v_now
                  AND q.instance_id NOT IN (SELECT unnest(p_exclude))
                  AND CASE
                      WHEN EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > v_now)
                          THEN false
                      WHEN p_cap_keys IS NULL THEN true
                      ELSE COALESCE(
                          (SELECT (i.orchestration_name || E'\x1f' || i.orchestration_version) = ANY (p_cap_keys)
                                  OR (i.orchestration_version = '' AND i.orchestration_name = ANY (p_cap_names))
                           FROM instances i WHERE i.instance_id = q.instance_id),
                          NOT EXISTS (SELECT 1 FROM orchestrator_queue s
                                      WHERE s.instance_id = q.instance_id AND s.start_name IS NOT NULL
                                        AND NOT ((s.start_name || E'\x1f' || s.start_version) = ANY (p_cap_keys)
                                                 OR (s.start_version = '' AND s.start_name = ANY (p_cap_names)))))
                      END
                ORDER BY q.visible_at, q.id
                LIMIT p_max * 4
                FOR UPDATE OF q SKIP LOCKED) s
          GROUP BY s.instance_id) c;
    IF v_candidates IS NOT NULL THEN
        RETURN QUERY SELECT * FROM dx_fetch_instance_items(v_candidates,
            array_fill(p_lock_ms, ARRAY[cardinality(v_candidates)]), p_max, NULL, NULL, NULL);
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    -- Nothing ready: say when the next delayed message (a timer) is due, so
    -- the caller sleeps until then rather than a whole poll interval.
    RETURN QUERY SELECT NULL::TEXT, NULL::TEXT, NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TEXT,
        NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::INT, NULL::BIGINT[], NULL::TEXT[], NULL::BIGINT[], NULL::TEXT[],
        (SELECT (extract(epoch FROM min(q.visible_at)) * 1000)::BIGINT FROM orchestrator_queue q WHERE q.visible_at > v_now),
        NULL::BIGINT, NULL::BIGINT;
END;
$$;
-- A token whose lock row is gone most often means the lock expired and
-- another worker took the instance over (the row now carries its token): say
-- that first, rather than "unknown".

CREATE FUNCTION dx_held_instance(p_token TEXT) RETURNS TEXT LANGUAGE plpgsql AS $$
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

-- Acks a batch of turns: the commit group (commit_group.go) sends every ack
-- of a batch in one call, and an ack alone is a batch of one. Each statement
-- below does its part for all the batch's acks at once, because a statement's
-- fixed cost (executor start, locking the table and its indexes) is most of
-- what a small ack costs. p_tokens and the other per-ack arrays have one
-- entry per ack, in order (the ack's ordinal a, 1-based); the event, worker,
-- orchestrator and timer arrays carry the ordinal of the ack each entry
-- belongs to. The acks of a batch hold different instances' locks. Any
-- error raises and rolls back the whole batch; the provider then sends each
-- ack alone for its own outcome.
--
-- Per ack this checks the lock, writes `instances` once (names, custom
-- status and the Watch bookkeeping together), writes `executions` only for
-- a new execution or a status, deletes the timers the turn cancelled, and
-- inserts the worker items it is asked to lease already leased.
CREATE FUNCTION dx_ack_orchestration_items(
    p_tokens TEXT[], p_executions BIGINT[], p_statuses TEXT[], p_outputs TEXT[],
    p_names TEXT[], p_versions TEXT[], p_parents TEXT[], p_custom_set BOOLEAN[], p_custom_values TEXT[],
    p_lease_ms BIGINT[],
    p_event_acks INT[], p_event_ids BIGINT[], p_event_kinds TEXT[], p_event_data TEXT[],
    -- p_worker_leases: the item's place (1-based) in its ack's list of items
    -- to lease to the caller, or NULL.
    p_worker_acks INT[], p_worker_instances TEXT[], p_worker_executions BIGINT[], p_worker_activities BIGINT[],
    p_worker_data TEXT[], p_worker_leases INT[],
    p_orch_acks INT[], p_orch_instances TEXT[], p_orch_data TEXT[], p_orch_visible_ms BIGINT[],
    p_cancel_instances TEXT[], p_cancel_executions BIGINT[], p_cancel_activities BIGINT[],
    p_timer_acks INT[], p_timer_executions BIGINT[], p_timer_ids BIGINT[],
    -- p_incarnations: the incarnation an instance gets when its ack creates it.
    p_incarnations BIGINT[],
    -- p_worker_tags: each worker item's tag (NULL: untagged); generation 2
    -- callers pass none.
    p_worker_tags TEXT[] DEFAULT NULL,
    -- Values (provider.ValuesUpdate): p_value_replace per ack; each key of
    -- an ack with its value, NULL to clear it.
    p_value_replace BOOLEAN[] DEFAULT NULL,
    p_value_acks INT[] DEFAULT NULL, p_value_keys TEXT[] DEFAULT NULL, p_value_data TEXT[] DEFAULT NULL,
    -- Each orchestrator item's orchestration and requested version when it
    -- is a StartOrchestration (orchestrator_queue.start_name), else NULL.
    p_orch_start_names TEXT[] DEFAULT NULL, p_orch_start_versions TEXT[] DEFAULT NULL,
    -- Each worker item's session (NULL: none).
    p_worker_sessions TEXT[] DEFAULT NULL
) RETURNS TABLE (ack INT, instance_id TEXT, status_changed BOOLEAN, orchestrator_pending BOOLEAN,
                 lease_tokens TEXT[], lease_states TEXT[],
                 -- The status change an ack made, as Watch reports it (NULL when
                 -- none): the provider announces it in full, so watchers need not
                 -- read it back.
                 execution_id BIGINT, status TEXT, custom_status_version BIGINT, status_seq BIGINT, status_xid BIGINT)
LANGUAGE plpgsql
-- Every statement joins a few acks' rows to the tables by key. A session
-- plans each statement once, often while the tables are nearly empty, and
-- keeps that plan: a hash join over a scan of the whole table then, which
-- costs more with every row added. Index lookups stay cheap at any size.
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
DECLARE
    v_now          TIMESTAMPTZ := now();
    v_n            INT := cardinality(p_tokens);
    v_instances    TEXT[];
    v_untils       TIMESTAMPTZ[];
    v_current      BIGINT[];
    v_started      BOOLEAN[] := '{}';
    v_new_execs    BOOLEAN[] := '{}';
    v_changed      BOOLEAN[] := '{}';
    v_start        BOOLEAN;
    v_new          BOOLEAN;
    v_a            INT;
    v_rows         INT;
    v_lease_acks   INT[];
    v_lease_tokens TEXT[];
    v_lease_states TEXT[];
BEGIN
    -- The lock rows, aligned with p_tokens once every token is found.
    SELECT array_agg(s.instance_id ORDER BY s.a), array_agg(s.locked_until ORDER BY s.a), count(*)
    INTO v_instances, v_untils, v_rows
    FROM (SELECT t.a, l.instance_id, l.locked_until
          FROM unnest(p_tokens) WITH ORDINALITY AS t(token, a)
          JOIN instance_locks l ON l.lock_token = t.token
          ORDER BY l.instance_id FOR UPDATE OF l) s;
    IF v_rows < v_n THEN
        RAISE EXCEPTION 'the instance lock is no longer held under this token: it expired and another worker took the instance over, or the turn was already acknowledged or abandoned' USING ERRCODE = 'DX001';
    END IF;
    SELECT array_agg(c.cur ORDER BY t.a) INTO v_current
    FROM unnest(v_instances) WITH ORDINALITY AS t(inst, a)
    LEFT JOIN LATERAL (SELECT i.current_execution_id AS cur FROM instances i
                       WHERE i.instance_id = t.inst FOR UPDATE) c ON true;

    FOR v_a IN 1..v_n LOOP
        IF v_untils[v_a] <= v_now THEN
            RAISE EXCEPTION 'lock on instance % expired % ago', v_instances[v_a], v_now - v_untils[v_a] USING ERRCODE = 'DX001';
        END IF;
        -- A turn for an instance that was never started may only drop its messages.
        v_start := v_current[v_a] IS NOT NULL OR COALESCE(p_names[v_a], '') <> '';
        IF NOT v_start AND (p_statuses[v_a] IS NOT NULL OR p_custom_set[v_a] OR v_a = ANY (p_event_acks)
                            OR v_a = ANY (p_value_acks) OR COALESCE(p_value_replace[v_a], false)) THEN
            RAISE EXCEPTION 'the first turn of instance % must name its orchestration', v_instances[v_a] USING ERRCODE = 'DX003';
        END IF;
        v_new := v_start AND (v_current[v_a] IS NULL OR p_executions[v_a] > v_current[v_a]);
        v_started := v_started || v_start;
        v_new_execs := v_new_execs || v_new;
        v_changed := v_changed || (v_new OR (v_start AND (p_statuses[v_a] IS NOT NULL OR p_custom_set[v_a])));
    END LOOP;

    IF true = ANY (v_new_execs) THEN
        INSERT INTO instances (instance_id, orchestration_name, orchestration_version, current_execution_id,
                               parent_instance_id, custom_status, custom_status_version, status_seq, status_xid,
                               created_at, updated_at, incarnation)
        SELECT u.inst, u.name, COALESCE(u.version, ''), u.ex, NULLIF(u.parent, ''),
               CASE WHEN u.cs THEN u.cv END, CASE WHEN u.cs THEN 1 ELSE 0 END,
               nextval('status_seq'), pg_current_xact_id()::TEXT::BIGINT, v_now, v_now, COALESCE(u.inc, 0)
        FROM unnest(v_instances, v_current, v_started, p_names, p_versions, p_executions, p_parents,
                    p_custom_set, p_custom_values, p_incarnations)
             AS u(inst, cur, st, name, version, ex, parent, cs, cv, inc)
        WHERE u.cur IS NULL AND u.st;
    END IF;
    IF array_remove(v_current, NULL) <> '{}' THEN
        UPDATE instances i SET
            current_execution_id = greatest(i.current_execution_id, u.ex),
            orchestration_name = COALESCE(NULLIF(u.name, ''), i.orchestration_name),
            -- The version is pinned by an execution's first turn (it has no
            -- history yet), and stays for the execution.
            orchestration_version = CASE WHEN NULLIF(u.version, '') IS NOT NULL AND (u.ex > i.current_execution_id
                    OR NOT EXISTS (SELECT 1 FROM history h WHERE h.instance_id = i.instance_id AND h.execution_id = u.ex))
                THEN u.version ELSE i.orchestration_version END,
            custom_status = CASE WHEN u.cs THEN u.cv ELSE i.custom_status END,
            custom_status_version = i.custom_status_version + CASE WHEN u.cs THEN 1 ELSE 0 END,
            status_seq = CASE WHEN u.ch THEN nextval('status_seq') ELSE i.status_seq END,
            status_xid = CASE WHEN u.ch THEN pg_current_xact_id()::TEXT::BIGINT ELSE i.status_xid END,
            updated_at = v_now
        FROM unnest(v_instances, v_current, v_changed, p_names, p_versions, p_executions, p_custom_set, p_custom_values)
             AS u(inst, cur, ch, name, version, ex, cs, cv)
        WHERE i.instance_id = u.inst AND u.cur IS NOT NULL;
    END IF;
    -- Each write of an execution's status moves the instance counts
    -- (status_counts): from what it was (read in RETURNING, which sees the
    -- table as before the statement), or, for a new execution, from the
    -- status of the one it follows.
    IF array_remove(p_statuses, NULL) <> '{}' THEN
        WITH written AS (
            INSERT INTO executions AS e (instance_id, execution_id, status, output, started_at, completed_at)
            SELECT u.inst, u.ex, u.status, u.output, v_now, CASE WHEN u.status <> 'Running' THEN v_now END
            FROM unnest(v_instances, p_executions, p_statuses, p_outputs) AS u(inst, ex, status, output)
            WHERE u.status IS NOT NULL
            ON CONFLICT ON CONSTRAINT executions_pkey DO UPDATE
            SET status = excluded.status, output = excluded.output, completed_at = excluded.completed_at
            RETURNING e.status,
                (SELECT o.status FROM executions o WHERE o.instance_id = e.instance_id AND o.execution_id = e.execution_id) AS was,
                (SELECT o.status FROM executions o WHERE o.instance_id = e.instance_id AND o.execution_id = e.execution_id - 1) AS followed)
        INSERT INTO status_counts (status, n)
        SELECT c.status, sum(c.n) FROM written w
        CROSS JOIN LATERAL (VALUES (w.status, 1), (COALESCE(w.was, w.followed), -1)) AS c(status, n)
        WHERE c.status IS NOT NULL GROUP BY c.status HAVING sum(c.n) <> 0;
    END IF;
    IF true = ANY (v_new_execs) THEN
        WITH opened AS (
            INSERT INTO executions AS e (instance_id, execution_id, status, started_at)
            SELECT u.inst, u.ex, 'Running', v_now
            FROM unnest(v_instances, p_executions, p_statuses, v_new_execs) AS u(inst, ex, status, new)
            WHERE u.new AND u.status IS NULL
            ON CONFLICT DO NOTHING
            RETURNING (SELECT o.status FROM executions o WHERE o.instance_id = e.instance_id AND o.execution_id = e.execution_id - 1) AS followed)
        INSERT INTO status_counts (status, n)
        SELECT c.status, sum(c.n) FROM opened o
        CROSS JOIN LATERAL (VALUES ('Running', 1), (o.followed, -1)) AS c(status, n)
        WHERE c.status IS NOT NULL GROUP BY c.status HAVING sum(c.n) <> 0;
    END IF;
    IF cardinality(p_event_ids) > 0 THEN
        INSERT INTO history (instance_id, execution_id, event_id, event_type, event_data, created_at)
        SELECT v_instances[u.a], p_executions[u.a], u.id, u.kind, u.data, v_now
        FROM unnest(p_event_acks, p_event_ids, p_event_kinds, p_event_data) AS u(a, id, kind, data)
        ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        IF v_rows < cardinality(p_event_ids) AND v_n = 1 THEN
            RAISE EXCEPTION 'execution % of instance % already has one of events %', p_executions[1], v_instances[1], p_event_ids
                USING ERRCODE = 'DX002';
        ELSIF v_rows < cardinality(p_event_ids) THEN
            -- Sent again alone, that ack gets the message above.
            RAISE EXCEPTION 'an ack of this batch repeats an event of its execution' USING ERRCODE = 'DX002';
        END IF;
    END IF;

    IF true = ANY (p_value_replace) THEN
        DELETE FROM instance_values v USING unnest(v_instances, p_value_replace) AS r(inst, replace)
        WHERE r.replace AND v.instance_id = r.inst;
    END IF;
    IF cardinality(p_value_keys) > 0 THEN
        DELETE FROM instance_values v USING unnest(p_value_acks, p_value_keys, p_value_data) AS u(a, k, data)
        WHERE u.data IS NULL AND v.instance_id = v_instances[u.a] AND v.key = u.k;
        INSERT INTO instance_values AS v (instance_id, key, value, execution_id, updated_at)
        SELECT v_instances[u.a], u.k, u.data, p_executions[u.a], v_now
        FROM unnest(p_value_acks, p_value_keys, p_value_data) AS u(a, k, data) WHERE u.data IS NOT NULL
        ON CONFLICT ON CONSTRAINT instance_values_pkey DO UPDATE
            SET value = EXCLUDED.value, execution_id = EXCLUDED.execution_id, updated_at = EXCLUDED.updated_at;
    END IF;
    IF cardinality(p_worker_data) > 0 THEN
        WITH src AS MATERIALIZED (
            SELECT u.a, u.inst, u.ex, u.act, u.data, u.lease, u.pos, p_worker_tags[u.pos] AS tag,
                   p_worker_sessions[u.pos] AS session,
                   CASE WHEN u.lease IS NOT NULL THEN gen_random_uuid()::text END AS token
            FROM unnest(p_worker_acks, p_worker_instances, p_worker_executions, p_worker_activities, p_worker_data,
                        p_worker_leases) WITH ORDINALITY AS u(a, inst, ex, act, data, lease, pos)),
        ins AS (
            INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, created_at,
                                      lock_token, locked_until, attempt_count, tag, session_id)
            SELECT s.inst, s.ex, s.act, s.data, v_now, v_now, s.token,
                   CASE WHEN s.token IS NOT NULL THEN v_now + p_lease_ms[s.a] * interval '1 millisecond' END,
                   CASE WHEN s.token IS NOT NULL THEN 1 ELSE 0 END, s.tag, s.session
            FROM src s ORDER BY s.pos)
        SELECT array_agg(s.a ORDER BY s.a, s.lease), array_agg(s.token ORDER BY s.a, s.lease)
        INTO v_lease_acks, v_lease_tokens
        FROM src s WHERE s.token IS NOT NULL;
    END IF;
    IF cardinality(p_orch_data) > 0 THEN
        INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, created_at, start_name, start_version)
        SELECT u.inst, u.data, CASE WHEN u.vis > 0 THEN greatest(v_now, to_timestamp(u.vis / 1000.0)) ELSE v_now END, v_now,
               p_orch_start_names[u.pos], p_orch_start_versions[u.pos]
        FROM unnest(p_orch_instances, p_orch_data, p_orch_visible_ms) WITH ORDINALITY AS u(inst, data, vis, pos);
    END IF;
    -- Cancel after enqueueing, so an activity scheduled and cancelled in one turn never runs.
    IF cardinality(p_cancel_activities) > 0 THEN
        DELETE FROM worker_queue w
        USING unnest(p_cancel_instances, p_cancel_executions, p_cancel_activities) AS c(inst, ex, act)
        WHERE w.instance_id = c.inst AND w.execution_id = c.ex AND w.activity_id = c.act;
    END IF;
    -- Timers nobody waits for any more (a lost Select, a finished execution).
    IF cardinality(p_timer_ids) > 0 THEN
        DELETE FROM orchestrator_queue q
        USING unnest(p_timer_acks, p_timer_executions, p_timer_ids) AS t(a, ex, id)
        WHERE q.instance_id = v_instances[t.a] AND q.work_item::jsonb->>'kind' = 'TimerFired'
          AND (q.work_item::jsonb->>'executionId')::BIGINT = t.ex AND (q.work_item::jsonb->>'id')::BIGINT = t.id;
    END IF;
    IF v_lease_tokens IS NOT NULL THEN
        -- What a lease reports: the state the batch left the item's execution
        -- in (as dx_execution_state reads it), and no lease for an item its
        -- turn also cancelled.
        SELECT array_agg(CASE WHEN w.id IS NOT NULL THEN t.token END ORDER BY t.ord),
               array_agg(CASE WHEN w.id IS NULL THEN NULL
                              WHEN i.instance_id IS NULL THEN 'Missing'
                              WHEN w.execution_id < i.current_execution_id THEN 'ContinuedAsNew'
                              ELSE COALESCE(e.status, 'Running') END ORDER BY t.ord)
        INTO v_lease_tokens, v_lease_states
        FROM unnest(v_lease_tokens) WITH ORDINALITY AS t(token, ord)
        LEFT JOIN worker_queue w ON w.lock_token = t.token
        LEFT JOIN instances i ON i.instance_id = w.instance_id
        LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id;
    END IF;
    DELETE FROM orchestrator_queue q WHERE q.lock_token = ANY (p_tokens);
    DELETE FROM instance_locks l WHERE l.instance_id = ANY (v_instances);
    -- The provider notifies fetchers after commit (NOTIFY inside this
    -- transaction would serialise every commit on the notify queue lock).
    -- orchestrator_pending: a message visible now, queued by the ack or left
    -- for its instance. Timers due later wake nobody: the provider notes
    -- their due time for its sleeping fetchers.
    -- The queue is probed per ack (a lateral LIMIT 1): as an EXISTS the
    -- planner may hash every visible message once per call instead, which
    -- costs more the longer the backlog.
    RETURN QUERY
    SELECT u.a::INT, u.inst, u.ch,
           EXISTS (SELECT 1 FROM unnest(p_orch_acks, p_orch_visible_ms) AS o(a, vis)
                   WHERE o.a = u.a AND o.vis <= (extract(epoch FROM v_now) * 1000)::BIGINT)
           OR pend.queued IS NOT NULL,
           l.tokens, l.states, st.ex, st.status, st.cv, st.seq, st.xid
    FROM unnest(v_instances, v_changed) WITH ORDINALITY AS u(inst, ch, a)
    LEFT JOIN LATERAL (SELECT true AS queued FROM orchestrator_queue q
                       WHERE q.instance_id = u.inst AND q.visible_at <= v_now LIMIT 1) pend ON true
    LEFT JOIN LATERAL (SELECT i.current_execution_id AS ex, COALESCE(e.status, 'Running') AS status,
                              i.custom_status_version AS cv, i.status_seq AS seq, i.status_xid AS xid
                       FROM instances i
                       LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
                       WHERE u.ch AND i.instance_id = u.inst LIMIT 1) st ON true
    LEFT JOIN LATERAL (
        SELECT array_agg(x.token ORDER BY x.ord) AS tokens, array_agg(x.state ORDER BY x.ord) AS states
        FROM unnest(v_lease_acks, v_lease_tokens, v_lease_states) WITH ORDINALITY AS x(a, token, state, ord)
        WHERE x.a = u.a) l ON true;
END;
$$;

-- The reason a turn was handed back is kept on the lock row (last_error),
-- which a committed turn deletes.
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

CREATE FUNCTION dx_renew_orchestration_lock(p_token TEXT, p_extend_ms BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    UPDATE instance_locks l SET locked_until = now() + p_extend_ms * interval '1 millisecond'
    WHERE l.lock_token = p_token AND l.locked_until > now();
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lock token is unknown, released or expired' USING ERRCODE = 'DX001';
    END IF;
END;
$$;

-- The oldest ready item the tag filter takes (provider.TagFilter: p_any,
-- or untagged items when p_untagged and those tagged one of p_tags) and
-- the session rules allow (provider.Sessions): an item without a session;
-- with p_worker, one of a session p_worker owns, or of a session nobody
-- owns while p_worker owns fewer than p_max_sessions, which it then owns
-- for p_session_ms. The filters run in the scan, so what they skip is never
-- locked. Two fetches claiming one session: the second's upsert finds it
-- owned and the fetch returns nothing. Generation 2 callers pass the lock
-- alone: untagged items without a session.
CREATE FUNCTION dx_fetch_work_item(p_lock_ms BIGINT, p_any BOOLEAN DEFAULT false, p_untagged BOOLEAN DEFAULT true,
                                   p_tags TEXT[] DEFAULT '{}', p_worker TEXT DEFAULT NULL, p_session_ms BIGINT DEFAULT 0,
                                   p_max_sessions INT DEFAULT 0)
RETURNS TABLE (lock_token TEXT, attempt_count INT, instance_id TEXT, execution_id BIGINT, activity_id BIGINT,
               work_item TEXT, state TEXT, item_id BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_now     TIMESTAMPTZ := now();
    v_id      BIGINT;
    v_session TEXT;
    -- The first look assumes room for another session; the sessions are
    -- counted only when it found one the worker does not own.
    v_room    BOOLEAN := p_worker IS NOT NULL;
    v_live    INT;
    v_owns    BOOLEAN;
BEGIN
    LOOP
        SELECT w.id, w.session_id INTO v_id, v_session FROM worker_queue w
        WHERE w.visible_at <= v_now AND (w.lock_token IS NULL OR w.locked_until <= v_now)
          AND (p_any OR (p_untagged AND w.tag IS NULL) OR w.tag = ANY (p_tags))
          AND (w.session_id IS NULL OR (p_worker IS NOT NULL AND (
                  EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = w.session_id AND s.worker_id = p_worker
                          AND s.locked_until > v_now)
                  OR (v_room AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = w.session_id
                                             AND s.locked_until > v_now)))))
        ORDER BY w.id LIMIT 1
        FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        EXIT WHEN v_session IS NULL OR NOT v_room;
        SELECT count(*), COALESCE(bool_or(s.session_id = v_session), false) INTO v_live, v_owns FROM sessions s
        WHERE s.worker_id = p_worker AND s.locked_until > v_now;
        EXIT WHEN v_owns OR v_live < p_max_sessions;
        v_room := false;
    END LOOP;
    IF v_session IS NOT NULL THEN
        INSERT INTO sessions AS s (session_id, worker_id, locked_until, last_activity_at)
        VALUES (v_session, p_worker, v_now + p_session_ms * interval '1 millisecond', v_now)
        ON CONFLICT (session_id) DO UPDATE
            SET worker_id = EXCLUDED.worker_id, locked_until = EXCLUDED.locked_until, last_activity_at = EXCLUDED.last_activity_at
            WHERE s.worker_id = EXCLUDED.worker_id OR s.locked_until <= v_now;
        IF NOT FOUND THEN
            RETURN; -- another worker claimed the session meanwhile
        END IF;
    END IF;
    RETURN QUERY
    UPDATE worker_queue w SET lock_token = gen_random_uuid()::text,
        locked_until = v_now + p_lock_ms * interval '1 millisecond', attempt_count = w.attempt_count + 1
    WHERE w.id = v_id
    RETURNING w.lock_token, w.attempt_count, w.instance_id, w.execution_id, w.activity_id, w.work_item,
              dx_execution_state(w.instance_id, w.execution_id), w.id;
END;
$$;

-- Activity results of a commit batch in one call (see
-- dx_ack_orchestration_items for why): each token's item is deleted and its
-- completion, if any, queued for its instance. A token that no longer holds
-- its item raises for the whole batch; the provider then acks each alone.
CREATE FUNCTION dx_ack_work_items(p_tokens TEXT[], p_instances TEXT[], p_completions TEXT[]) RETURNS VOID
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off
    SET enable_mergejoin = off AS $$
DECLARE
    v_rows     INT;
    v_sessions TEXT[];
BEGIN
    WITH gone AS (
        DELETE FROM worker_queue w USING unnest(p_tokens) AS t(token)
        WHERE w.lock_token = t.token AND w.locked_until > now()
        RETURNING w.session_id),
    counted AS (SELECT count(*) AS n, array_agg(g.session_id) FILTER (WHERE g.session_id IS NOT NULL) AS sessions FROM gone g)
    SELECT c.n, c.sessions INTO v_rows, v_sessions FROM counted c;
    IF v_rows < cardinality(p_tokens) THEN
        RAISE EXCEPTION 'lock token is unknown, expired, or its item was cancelled' USING ERRCODE = 'DX001';
    END IF;
    IF v_sessions IS NOT NULL THEN
        UPDATE sessions s SET last_activity_at = now() WHERE s.session_id = ANY (v_sessions);
    END IF;
    INSERT INTO orchestrator_queue (instance_id, work_item)
    SELECT u.inst, u.completion FROM unnest(p_instances, p_completions) WITH ORDINALITY AS u(inst, completion, ord)
    WHERE u.completion IS NOT NULL ORDER BY u.ord;
END;
$$;
CREATE FUNCTION dx_abandon_work_item(p_token TEXT, p_delay_ms BIGINT, p_ignore_attempt BOOLEAN)
RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    UPDATE worker_queue w SET lock_token = NULL, locked_until = NULL,
        visible_at = now() + p_delay_ms * interval '1 millisecond',
        attempt_count = CASE WHEN p_ignore_attempt THEN greatest(w.attempt_count - 1, 0) ELSE w.attempt_count END
    WHERE w.lock_token = p_token AND w.locked_until > now();
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lock token is unknown, expired, or its item was cancelled' USING ERRCODE = 'DX001';
    END IF;
END;
$$;

CREATE FUNCTION dx_renew_work_item(p_token TEXT, p_extend_ms BIGINT) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
    v_instance  TEXT;
    v_execution BIGINT;
    v_session   TEXT;
BEGIN
    UPDATE worker_queue w SET locked_until = now() + p_extend_ms * interval '1 millisecond'
    WHERE w.lock_token = p_token AND w.locked_until > now()
    RETURNING w.instance_id, w.execution_id, w.session_id INTO v_instance, v_execution, v_session;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lock token is unknown, expired, or its item was cancelled' USING ERRCODE = 'DX001';
    END IF;
    IF v_session IS NOT NULL THEN
        UPDATE sessions s SET last_activity_at = now() WHERE s.session_id = v_session;
    END IF;
    RETURN dx_execution_state(v_instance, v_execution);
END;
$$;

CREATE FUNCTION dx_enqueue_orchestrator(p_instance TEXT, p_data TEXT, p_visible_ms BIGINT, p_delay_ms BIGINT,
                                        p_start_name TEXT DEFAULT NULL, p_start_version TEXT DEFAULT NULL)
RETURNS VOID LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, start_name, start_version)
    VALUES (p_instance, p_data, greatest(now() + p_delay_ms * interval '1 millisecond',
                                         CASE WHEN p_visible_ms > 0 THEN to_timestamp(p_visible_ms / 1000.0) ELSE now() END),
            p_start_name, p_start_version);
END;
$$;

CREATE FUNCTION dx_enqueue_worker(p_instance TEXT, p_execution BIGINT, p_activity BIGINT, p_data TEXT, p_delay_ms BIGINT,
                                  p_tag TEXT DEFAULT NULL, p_session TEXT DEFAULT NULL)
RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, tag, session_id)
    VALUES (p_instance, p_execution, p_activity, p_data, now() + p_delay_ms * interval '1 millisecond', p_tag, p_session);
END;
$$;

-- provider.Sessions: renew a worker's live sessions that saw work within
-- p_idle_ms, end a worker's sessions, forget lapsed sessions with no item.
CREATE FUNCTION dx_renew_sessions(p_worker TEXT, p_extend_ms BIGINT, p_idle_ms BIGINT) RETURNS INT
LANGUAGE sql AS $$
    WITH renewed AS (
        UPDATE sessions s SET locked_until = now() + p_extend_ms * interval '1 millisecond'
        WHERE s.worker_id = p_worker AND s.locked_until > now() AND s.last_activity_at > now() - p_idle_ms * interval '1 millisecond'
        RETURNING 1)
    SELECT count(*)::INT FROM renewed
$$;

CREATE FUNCTION dx_release_sessions(p_worker TEXT) RETURNS INT LANGUAGE sql AS $$
    WITH gone AS (DELETE FROM sessions s WHERE s.worker_id = p_worker RETURNING 1)
    SELECT count(*)::INT FROM gone
$$;

CREATE FUNCTION dx_cleanup_sessions() RETURNS INT LANGUAGE sql AS $$
    WITH gone AS (
        DELETE FROM sessions s WHERE s.locked_until <= now()
          AND NOT EXISTS (SELECT 1 FROM worker_queue w WHERE w.session_id = s.session_id)
        RETURNING 1)
    SELECT count(*)::INT FROM gone
$$;

CREATE FUNCTION dx_append_history(p_instance TEXT, p_execution BIGINT, p_ids BIGINT[], p_kinds TEXT[], p_data TEXT[])
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    v_rows INT;
BEGIN
    PERFORM 1 FROM executions e WHERE e.instance_id = p_instance AND e.execution_id = p_execution;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'execution % of instance % does not exist', p_execution, p_instance USING ERRCODE = 'DX004';
    END IF;
    INSERT INTO history (instance_id, execution_id, event_id, event_type, event_data)
    SELECT p_instance, p_execution, u.id, u.kind, u.data FROM unnest(p_ids, p_kinds, p_data) AS u(id, kind, data)
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    IF v_rows < COALESCE(cardinality(p_ids), 0) THEN
        RAISE EXCEPTION 'execution % of instance % already has one of events %', p_execution, p_instance, p_ids
            USING ERRCODE = 'DX002';
    END IF;
END;
$$;

CREATE FUNCTION dx_descendants(p_root TEXT) RETURNS TABLE (instance_id TEXT, depth INT) LANGUAGE sql STABLE AS $$
    WITH RECURSIVE tree(id, depth) AS (
        SELECT p_root, 0
        UNION
        SELECT i.instance_id, t.depth + 1 FROM instances i JOIN tree t ON i.parent_instance_id = t.id
        WHERE t.depth < 10000
    )
    SELECT id, min(depth)::INT FROM tree GROUP BY id
$$;

-- dx_delete_executions deletes every execution of the instances p_ids and
-- counts each instance's newest out of status_counts; it returns how many
-- executions it deleted.
CREATE FUNCTION dx_delete_executions(p_ids TEXT[]) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    v_rows BIGINT;
BEGIN
    WITH gone AS (
        DELETE FROM executions e WHERE e.instance_id = ANY (p_ids)
        RETURNING e.instance_id, e.execution_id, e.status
    ), counted AS (
        INSERT INTO status_counts (status, n)
        SELECT newest.status, -count(*) FROM (
            SELECT DISTINCT ON (g.instance_id) g.status FROM gone g ORDER BY g.instance_id, g.execution_id DESC
        ) newest GROUP BY newest.status
    )
    SELECT count(*) INTO v_rows FROM gone;
    RETURN v_rows;
END;
$$;

-- A forced delete of a sub-orchestration is refused while its parent runs:
-- the parent waits for the child and would never hear from it again.

CREATE FUNCTION dx_delete_tree(p_root TEXT, p_force BOOLEAN, p_bulk BOOLEAN,
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
    executions_deleted := executions_deleted + dx_delete_executions(v_ids);
    DELETE FROM orchestrator_queue q WHERE q.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; messages_deleted := messages_deleted + v_rows;
    DELETE FROM worker_queue w WHERE w.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; messages_deleted := messages_deleted + v_rows;
    DELETE FROM instance_values v WHERE v.instance_id = ANY (v_ids);
    -- Removing the lock makes an in-flight ack fail instead of recreating the instance.
    DELETE FROM instance_locks l WHERE l.instance_id = ANY (v_ids);
    DELETE FROM instances i WHERE i.instance_id = ANY (v_ids);
    GET DIAGNOSTICS v_rows = ROW_COUNT; instances_deleted := instances_deleted + v_rows;
END;
$$;

CREATE FUNCTION dx_delete_instances(p_ids TEXT[], p_force BOOLEAN,
    OUT instances_deleted BIGINT, OUT executions_deleted BIGINT, OUT events_deleted BIGINT, OUT messages_deleted BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_id TEXT;
BEGIN
    instances_deleted := 0; executions_deleted := 0; events_deleted := 0; messages_deleted := 0;
    FOREACH v_id IN ARRAY COALESCE(p_ids, '{}') LOOP
        SELECT * INTO instances_deleted, executions_deleted, events_deleted, messages_deleted
        FROM dx_delete_tree(v_id, p_force, false, instances_deleted, executions_deleted, events_deleted, messages_deleted);
    END LOOP;
END;
$$;

CREATE FUNCTION dx_delete_bulk(p_ids TEXT[], p_completed_before TIMESTAMPTZ, p_limit INT,
    OUT instances_deleted BIGINT, OUT executions_deleted BIGINT, OUT events_deleted BIGINT, OUT messages_deleted BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_id     TEXT;
    v_before BIGINT;
    v_roots  INT := 0;
BEGIN
    instances_deleted := 0; executions_deleted := 0; events_deleted := 0; messages_deleted := 0;
    FOR v_id IN
        SELECT i.instance_id FROM instances i
        JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        WHERE i.parent_instance_id IS NULL AND e.status IN ('Completed', 'Failed', 'Terminated')
          AND (COALESCE(cardinality(p_ids), 0) = 0 OR i.instance_id = ANY (p_ids))
          AND (p_completed_before IS NULL OR e.completed_at < p_completed_before)
        ORDER BY e.completed_at, i.instance_id
    LOOP
        EXIT WHEN p_limit > 0 AND v_roots >= p_limit;
        v_before := instances_deleted;
        SELECT * INTO instances_deleted, executions_deleted, events_deleted, messages_deleted
        FROM dx_delete_tree(v_id, false, true, instances_deleted, executions_deleted, events_deleted, messages_deleted);
        IF instances_deleted > v_before THEN
            v_roots := v_roots + 1;
        END IF;
    END LOOP;
END;
$$;

CREATE FUNCTION dx_prune_executions(p_instance TEXT, p_keep_last INT, p_completed_before TIMESTAMPTZ,
    OUT executions_deleted BIGINT, OUT events_deleted BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_current BIGINT;
    v_victims BIGINT[];
BEGIN
    SELECT i.current_execution_id INTO v_current FROM instances i WHERE i.instance_id = p_instance FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'instance % does not exist', p_instance USING ERRCODE = 'DX004';
    END IF;
    SELECT array_agg(r.execution_id) INTO v_victims FROM (
        SELECT e.execution_id, e.completed_at, row_number() OVER (ORDER BY e.execution_id DESC) AS rank
        FROM executions e WHERE e.instance_id = p_instance) r
    WHERE r.execution_id <> v_current
      AND (p_keep_last <= 0 OR r.rank > p_keep_last)
      AND (p_completed_before IS NULL OR r.completed_at < p_completed_before);
    DELETE FROM history h WHERE h.instance_id = p_instance AND h.execution_id = ANY (COALESCE(v_victims, '{}'));
    GET DIAGNOSTICS events_deleted = ROW_COUNT;
    DELETE FROM executions e WHERE e.instance_id = p_instance AND e.execution_id = ANY (COALESCE(v_victims, '{}'));
    GET DIAGNOSTICS executions_deleted = ROW_COUNT;
END;
$$;

-- A client's message (event, cancel, terminate) is queued only for an instance
-- that can still read it: running (or continued as new), or with a start queued. DX004 otherwise
-- (no such instance), DX006 when its current execution has ended.

CREATE FUNCTION dx_start_queued(p_instance TEXT) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM orchestrator_queue q
                   WHERE q.instance_id = p_instance AND (q.work_item::jsonb ->> 'kind') = 'StartOrchestration');
$$;

CREATE FUNCTION dx_instance_status(p_instance TEXT) RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT COALESCE(e.status, 'Running') FROM instances i
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    WHERE i.instance_id = p_instance;
$$;

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
    -- A ContinuedAsNew execution's successor reads the message: its
    -- ContinueAsNew message is queued.
    IF v_status NOT IN ('Running', 'ContinuedAsNew') THEN
        RAISE EXCEPTION 'it is %', v_status USING ERRCODE = 'DX006';
    END IF;
    INSERT INTO orchestrator_queue (instance_id, work_item, visible_at) VALUES (p_instance, p_data, now());
END;
$$;

-- A start or a message inside a caller's own transaction (provider.TxStarter),
-- whose connection's search_path is the caller's: these run with the
-- schema's, captured when this file is applied.
CREATE FUNCTION dx_start_in_tx(p_instance TEXT, p_data TEXT, p_owner TEXT, p_events TEXT[], p_reuse TEXT,
                               p_start_name TEXT, p_start_version TEXT)
RETURNS VOID LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM dx_start_instance(p_instance, p_data, p_owner, p_events, p_reuse, p_start_name, p_start_version);
END;
$$;

CREATE FUNCTION dx_send_in_tx(p_instance TEXT, p_data TEXT) RETURNS VOID LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM dx_send_to_instance(p_instance, p_data);
END;
$$;

-- What holds an instance ID a start names: the instance, or else its queued
-- start, read in one statement (the ack that consumes a start creates the
-- instance in the same commit), with the owner it recorded. A live lock on
-- an ID with nothing queued is a direct start earlier in the caller's commit
-- batch, whose ack creates the instance later in it: a queued start too.

CREATE FUNCTION dx_id_holder(p_instance TEXT)
RETURNS TABLE (held BOOLEAN, instance BOOLEAN, status TEXT, parent TEXT, owner TEXT) LANGUAGE sql STABLE AS $$
    SELECT s.instance_id IS NOT NULL OR q.owner_of IS NOT NULL OR d.direct, s.instance_id IS NOT NULL,
           COALESCE(s.status, ''), s.parent_instance_id,
           CASE WHEN s.instance_id IS NOT NULL THEN s.owner ELSE q.owner END
    FROM (SELECT 1) one
    CROSS JOIN LATERAL (
        SELECT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = p_instance AND l.locked_until > now())
           AND NOT EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = p_instance) AS direct) d
    LEFT JOIN LATERAL (
        SELECT i.instance_id, COALESCE(e.status, 'Running') AS status, i.parent_instance_id,
               (SELECT h.event_data::jsonb ->> 'owner' FROM history h
                WHERE h.instance_id = i.instance_id AND h.execution_id = i.current_execution_id
                  AND h.event_type = 'OrchestrationStarted' ORDER BY h.event_id LIMIT 1) AS owner
        FROM instances i
        LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        WHERE i.instance_id = p_instance) s ON true
    LEFT JOIN LATERAL (
        SELECT q.instance_id AS owner_of, q.work_item::jsonb ->> 'owner' AS owner FROM orchestrator_queue q
        WHERE q.instance_id = p_instance AND (q.work_item::jsonb ->> 'kind') = 'StartOrchestration'
        ORDER BY q.id LIMIT 1) q ON true
$$;

-- A client's start (provider.StartInstance): queues the start, then its
-- events, when nothing holds the ID; does nothing for a retry of the start
-- that holds it (the same owner); replaces what holds it when the ID-reuse
-- policy allows; raises DX009 otherwise, its DETAIL a JSON object with the
-- holder's status ('' for a queued start), owner and why the policy could
-- not replace it. The instance's advisory lock, which dx_lock_new_instance
-- takes too, makes two starts of one ID take turns, and every statement
-- after it reads a new snapshot, so the second sees what the first
-- committed. Before it replaces, a start deletes the lock row and reads
-- again: a turn in flight then fails to commit (an ack committing now is
-- waited for, and read) instead of writing behind the check. A refusal
-- raises, which undoes that; a retry returns before it.

CREATE FUNCTION dx_start_instance(p_instance TEXT, p_data TEXT, p_owner TEXT, p_events TEXT[], p_reuse TEXT,
                                  p_start_name TEXT DEFAULT NULL, p_start_version TEXT DEFAULT NULL)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    v_holder  RECORD;
    v_running TEXT[];
    v_why     TEXT;
    v_ids     TEXT[];
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '/' || p_instance));
    SELECT * INTO v_holder FROM dx_id_holder(p_instance);
    IF v_holder.held AND p_owner <> '' AND v_holder.owner IS NOT DISTINCT FROM p_owner THEN
        RETURN; -- a retry of the start that holds the ID
    END IF;
    IF v_holder.held AND p_reuse <> 'Fail' THEN
        DELETE FROM instance_locks l WHERE l.instance_id = p_instance;
        SELECT * INTO v_holder FROM dx_id_holder(p_instance);
    END IF;
    IF v_holder.held THEN
        v_ids := ARRAY[p_instance];
        IF v_holder.instance THEN
            SELECT array_agg(d.instance_id) INTO v_ids FROM dx_descendants(p_instance) d;
        END IF;
        IF p_reuse = 'Fail' THEN
            v_why := '';
        ELSIF v_holder.parent IS NOT NULL THEN
            v_why := format('a sub-orchestration of "%s", never replaced', v_holder.parent);
        ELSIF p_reuse = 'AllowFinished' AND v_holder.status NOT IN ('Completed', 'Failed', 'Terminated') THEN
            v_why := '';
        ELSIF p_reuse = 'AllowFinished' THEN
            SELECT array_agg(i.instance_id ORDER BY i.instance_id) INTO v_running
            FROM instances i LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
            WHERE i.instance_id = ANY (v_ids) AND COALESCE(e.status, 'Running') NOT IN ('Completed', 'Failed', 'Terminated');
            IF v_running IS NOT NULL THEN
                v_why := 'its sub-orchestrations ' || array_to_string(v_running, ', ') || ' still run';
            END IF;
        END IF;
        IF v_why IS NOT NULL THEN
            RAISE EXCEPTION 'instance % already exists', p_instance USING ERRCODE = 'DX009',
                DETAIL = json_build_object('status', v_holder.status, 'owner', COALESCE(v_holder.owner, ''), 'why', v_why)::text;
        END IF;
        DELETE FROM history h WHERE h.instance_id = ANY (v_ids);
        PERFORM dx_delete_executions(v_ids);
        DELETE FROM orchestrator_queue q WHERE q.instance_id = ANY (v_ids);
        DELETE FROM worker_queue w WHERE w.instance_id = ANY (v_ids);
        DELETE FROM instance_values v WHERE v.instance_id = ANY (v_ids);
        DELETE FROM instance_locks l WHERE l.instance_id = ANY (v_ids);
        DELETE FROM instances i WHERE i.instance_id = ANY (v_ids);
    END IF;
    INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, start_name, start_version)
    SELECT p_instance, u.data, now(), CASE WHEN u.ord = 1 THEN p_start_name END, CASE WHEN u.ord = 1 THEN p_start_version END
    FROM unnest(ARRAY[p_data] || COALESCE(p_events, '{}')) WITH ORDINALITY AS u(data, ord)
    ORDER BY u.ord;
END;
$$;

-- Locks the turns of named instances, in the order given, up to p_max of
-- them, and returns them: for dx_fetch_orchestration_items' candidates, for
-- the commit batch's fetches of the instances it continues (activity
-- results, acks of turns, eager starts), and for a process that must run a
-- turn no worker will (terminating an instance whose workers are gone). An
-- instance a live lock holds, or with no visible message, is passed over.
-- Both are read first, without locking: nothing visible is the common case
-- after an ack and then no lock row is written and deleted again; and an ack
-- of the instance in another batch (commit_group.go) that has deleted the
-- lock row but not committed still shows it here, where the INSERT below
-- would wait for that batch while it may wait for ours. Instances are locked
-- one by one in a loop of plain statements (calling a function per instance
-- cost more than its statements); their turns are read in one statement.
CREATE FUNCTION dx_fetch_instance_items(p_instances TEXT[], p_lock_ms BIGINT[], p_max INT,
    -- What the caller's history cache holds of each instance (or NULL): the
    -- incarnation and execution, and the last event ID. When the instance is
    -- still that incarnation in that execution, only later events are
    -- returned, and history_after says from which.
    p_known_incarnations BIGINT[], p_known_executions BIGINT[], p_known_events BIGINT[])
RETURNS TABLE (
    instance_id TEXT, lock_token TEXT, item_exists BOOLEAN, orchestration_name TEXT, orchestration_version TEXT,
    execution_id BIGINT, status TEXT, parent_instance_id TEXT, custom_status TEXT, custom_status_version BIGINT,
    attempt_count INT, message_ids BIGINT[], messages TEXT[], event_ids BIGINT[], events TEXT[],
    next_visible_ms BIGINT, incarnation BIGINT, history_after BIGINT
) LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off
    SET enable_mergejoin = off AS $$
DECLARE
    v_now      TIMESTAMPTZ := now();
    v_k        INT;
    v_instance TEXT;
    v_token    TEXT;
    v_until    TIMESTAMPTZ;
    v_attempt  INT;
    v_tried    TEXT[] := '{}';
    v_locked   TEXT[] := '{}';
    v_tokens   TEXT[] := '{}';
    v_attempts INT[] := '{}';
    v_known    INT[] := '{}';
BEGIN
    FOR v_k IN 1..COALESCE(cardinality(p_instances), 0) LOOP
        EXIT WHEN cardinality(v_locked) >= p_max;
        v_instance := p_instances[v_k];
        CONTINUE WHEN v_instance = ANY (v_tried);
        v_tried := v_tried || v_instance;
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM orchestrator_queue q WHERE q.instance_id = v_instance AND q.visible_at <= v_now)
            OR EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = v_instance AND l.locked_until > v_now);
        -- The advisory lock and the lock row make the instance lock exclusive.
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtext(current_schema() || '/' || v_instance));
        v_token := gen_random_uuid()::text;
        -- Never wait for an instance lock row: an acking holder keeps it locked
        -- while it waits for message rows this fetcher may hold (a deadlock).
        SELECT l.locked_until INTO v_until FROM instance_locks l
        WHERE l.instance_id = v_instance FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
            CONTINUE WHEN v_until > v_now;
            UPDATE instance_locks l SET lock_token = v_token,
                locked_until = v_now + p_lock_ms[v_k] * interval '1 millisecond', locked_at = v_now
            WHERE l.instance_id = v_instance;
        ELSE
            -- No row, or a row another transaction holds: only a new row is ours.
            INSERT INTO instance_locks (instance_id, lock_token, locked_until, locked_at)
            VALUES (v_instance, v_token, v_now + p_lock_ms[v_k] * interval '1 millisecond', v_now)
            ON CONFLICT DO NOTHING;
            CONTINUE WHEN NOT FOUND;
        END IF;
        -- Tag a gap-free prefix of the visible messages. A message another
        -- transaction holds (a fetcher's scan) and every later one wait for the
        -- next turn: skipping it would deliver messages out of order, or an
        -- event before the StartOrchestration it depends on.
        WITH got AS MATERIALIZED (
            SELECT q2.id FROM orchestrator_queue q2
            WHERE q2.instance_id = v_instance AND q2.visible_at <= v_now
            ORDER BY q2.id FOR UPDATE SKIP LOCKED),
        gap AS (
            SELECT min(a.id) AS id FROM orchestrator_queue a
            WHERE a.instance_id = v_instance AND a.visible_at <= v_now AND a.id NOT IN (SELECT got.id FROM got)),
        tagged AS (
            UPDATE orchestrator_queue q SET lock_token = v_token, attempt_count = q.attempt_count + 1
            FROM got
            WHERE q.id = got.id AND got.id < COALESCE((SELECT gap.id FROM gap), 9223372036854775807)
            RETURNING q.attempt_count)
        SELECT max(t.attempt_count) INTO v_attempt FROM tagged t;
        IF v_attempt IS NULL THEN
            DELETE FROM instance_locks l WHERE l.lock_token = v_token;
            CONTINUE;
        END IF;
        v_locked := v_locked || v_instance;
        v_tokens := v_tokens || v_token;
        v_attempts := v_attempts || v_attempt;
        v_known := v_known || v_k;
    END LOOP;
    IF cardinality(v_locked) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT t.inst, t.token, i.instance_id IS NOT NULL, COALESCE(i.orchestration_name, ''),
           COALESCE(i.orchestration_version, ''), COALESCE(i.current_execution_id, 1), e.status,
           i.parent_instance_id, i.custom_status, COALESCE(i.custom_status_version, 0),
           t.attempt, m.ids, m.items, COALESCE(h.ids, '{}'), COALESCE(h.events, '{}'), NULL::BIGINT,
           i.incarnation, c.after
    FROM unnest(v_locked, v_tokens, v_attempts, v_known) WITH ORDINALITY AS t(inst, token, attempt, k, ord)
    LEFT JOIN instances i ON i.instance_id = t.inst
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    CROSS JOIN LATERAL (
        SELECT CASE WHEN i.incarnation = p_known_incarnations[t.k] AND i.current_execution_id = p_known_executions[t.k]
                    THEN COALESCE(p_known_events[t.k], 0) ELSE 0 END AS after) c
    CROSS JOIN LATERAL (
        SELECT array_agg(q.id ORDER BY q.id) AS ids, array_agg(q.work_item ORDER BY q.id) AS items
        FROM orchestrator_queue q WHERE q.lock_token = t.token) m
    LEFT JOIN LATERAL (
        SELECT array_agg(h.event_id ORDER BY h.event_id) AS ids, array_agg(h.event_data ORDER BY h.event_id) AS events
        FROM history h WHERE h.instance_id = t.inst AND h.execution_id = i.current_execution_id
          AND h.event_id > c.after) h ON true
    ORDER BY t.ord;
END;
$$;

-- Direct start: the process starting an instance commits its
-- first turn as the start, with no start message queued. This takes the
-- lock a fetch would take, under the caller's token, for an instance that
-- does not exist, is not locked and has nothing queued, so the ack of the
-- same transaction commits the turn. Otherwise it raises DX007 and the
-- caller queues the start instead. The instance's advisory lock comes
-- first: a start of the same ID, queued (dx_start_instance) or direct, waits
-- on it, and the checks after it then see that start's commit.
CREATE FUNCTION dx_lock_new_instance(p_instance TEXT, p_token TEXT, p_lock_ms BIGINT) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
    v_now TIMESTAMPTZ := now();
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '/' || p_instance));
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

-- Turns built from a cached history (provider.CachedTurnCommitter), a
-- commit batch's in one call: each deletes the queued messages it consumes
-- (p_queued, in stored form, each of claim p_queued_of: a timer, or quiet
-- results an activity's turn delivers; the activity's own item the batch's
-- dx_ack_work_items deletes) and takes the lock a fetch would take, under the
-- caller's token, so that the ack of the same transaction commits it, when
-- no live lock holds its instance, every message it consumes is still queued
-- and visible, no other message of it is visible, and it is still the
-- incarnation, execution and last event the turn was built from. Otherwise
-- it is stale: this raises DX008 once every claim was tried, its DETAIL a
-- line 'claim K: reason' for each stale claim (K its place, 1-based), so the
-- commit group fails those claims' callers and sends the rest of the batch
-- again together. Like a fetch it holds the instance's advisory lock and
-- never waits for a lock row another transaction holds.
CREATE FUNCTION dx_claim_cached_turns(p_instances TEXT[], p_tokens TEXT[], p_lock_ms BIGINT,
    p_incarnations BIGINT[], p_executions BIGINT[], p_last_events BIGINT[], p_queued_of INT[], p_queued TEXT[]) RETURNS VOID
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off
    SET enable_mergejoin = off AS $$
DECLARE
    v_now      TIMESTAMPTZ := now();
    v_until    TIMESTAMPTZ := now() + p_lock_ms * interval '1 millisecond';
    v_stale_ks INT[];
    v_stale    TEXT[];
    v_ks       INT[];
    v_reasons  TEXT[];
BEGIN
    -- Set-based, a statement per step for the whole batch: claims found
    -- stale at a step are left out of the later ones (the transaction rolls
    -- back if any is stale, so what a step did for them does not matter).
    SELECT COALESCE(array_agg(u.k ORDER BY u.k), '{}'),
           COALESCE(array_agg(format('claim %s: instance %s is being locked', u.k, u.inst) ORDER BY u.k), '{}')
    INTO v_stale_ks, v_stale
    FROM unnest(p_instances) WITH ORDINALITY AS u(inst, k)
    WHERE NOT pg_try_advisory_xact_lock(hashtext(current_schema() || '/' || u.inst));

    WITH got AS (
        SELECT q.id, u.k FROM unnest(p_queued_of, p_queued) AS u(k, item)
        JOIN orchestrator_queue q ON q.instance_id = p_instances[u.k] AND q.work_item = u.item
        WHERE q.visible_at <= v_now AND q.lock_token IS NULL AND u.k <> ALL (v_stale_ks)
        FOR UPDATE OF q SKIP LOCKED),
    deleted AS (
        DELETE FROM orchestrator_queue q USING got WHERE q.id = got.id RETURNING got.k)
    SELECT COALESCE(array_agg(w.k ORDER BY w.k), '{}'),
           COALESCE(array_agg(format('claim %s: instance %s had a message to consume taken, or not due', w.k, p_instances[w.k])
                              ORDER BY w.k), '{}')
    INTO v_ks, v_reasons
    FROM (SELECT u.k, count(*) AS n FROM unnest(p_queued_of) AS u(k) GROUP BY u.k) w
    WHERE w.k <> ALL (v_stale_ks) AND w.n <> (SELECT count(*) FROM deleted d WHERE d.k = w.k);
    v_stale_ks := v_stale_ks || v_ks;
    v_stale := v_stale || v_reasons;

    -- The lock a fetch would take: a lock row that expired is taken over,
    -- none is inserted; a live one, or one another transaction holds (never
    -- waited for), makes the claim stale.
    WITH claim AS (
        SELECT u.inst, u.k, p_tokens[u.k] AS token FROM unnest(p_instances) WITH ORDINALITY AS u(inst, k)
        WHERE u.k <> ALL (v_stale_ks)),
    cur AS (
        SELECT l.instance_id, l.locked_until FROM instance_locks l JOIN claim c ON l.instance_id = c.inst
        FOR UPDATE OF l SKIP LOCKED),
    taken_over AS (
        UPDATE instance_locks l SET lock_token = c.token, locked_until = v_until, locked_at = v_now
        FROM cur JOIN claim c ON c.inst = cur.instance_id
        WHERE l.instance_id = cur.instance_id AND cur.locked_until <= v_now
        RETURNING c.k),
    inserted AS (
        INSERT INTO instance_locks (instance_id, lock_token, locked_until, locked_at)
        SELECT c.inst, c.token, v_until, v_now FROM claim c
        WHERE NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = c.inst)
        ON CONFLICT DO NOTHING
        RETURNING instance_id)
    SELECT COALESCE(array_agg(c.k ORDER BY c.k), '{}'),
           COALESCE(array_agg(format('claim %s: instance %s %s', c.k, c.inst, CASE
               WHEN cur.locked_until > v_now THEN 'is locked'
               WHEN cur.instance_id IS NULL AND EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = c.inst)
                   THEN 'is being unlocked'
               ELSE 'is being locked' END) ORDER BY c.k), '{}')
    INTO v_ks, v_reasons
    FROM claim c LEFT JOIN cur ON cur.instance_id = c.inst
    WHERE c.k NOT IN (SELECT t.k FROM taken_over t) AND c.inst NOT IN (SELECT i.instance_id FROM inserted i);
    v_stale_ks := v_stale_ks || v_ks;
    v_stale := v_stale || v_reasons;

    -- Scalar probes, not EXISTS: the planner may run an EXISTS as one hash
    -- of the whole table per call, and the plan cached while the table was
    -- small is then kept as it grows (it cost 0.75 ms a call at 7,000
    -- instances).
    v_stale := v_stale || ARRAY(
        SELECT format('claim %s: instance %s changed, ended or has messages waiting', u.k, u.inst)
        FROM unnest(p_instances, p_incarnations, p_executions, p_last_events) WITH ORDINALITY AS u(inst, inc, ex, last, k)
        WHERE u.k <> ALL (v_stale_ks)
          AND ((SELECT true FROM instances i WHERE i.instance_id = u.inst
                AND i.incarnation = u.inc AND i.current_execution_id = u.ex) IS NULL
            OR (SELECT max(h.event_id) FROM history h WHERE h.instance_id = u.inst AND h.execution_id = u.ex)
               IS DISTINCT FROM u.last
            -- An execution can end without an event (failed for a message no
            -- one can decode): its last event alone does not tell.
            OR (SELECT true FROM executions e WHERE e.instance_id = u.inst AND e.execution_id = u.ex
                AND e.status <> 'Running') IS NOT NULL
            OR (SELECT true FROM orchestrator_queue q WHERE q.instance_id = u.inst AND q.visible_at <= v_now LIMIT 1) IS NOT NULL)
        ORDER BY u.k);
    IF cardinality(v_stale) > 0 THEN
        RAISE EXCEPTION '%', CASE WHEN cardinality(v_stale) = 1 THEN substr(v_stale[1], strpos(v_stale[1], ': ') + 2)
                                  ELSE cardinality(v_stale) || ' cached turns are stale' END
            USING ERRCODE = 'DX008', DETAIL = array_to_string(v_stale, E'\n');
    END IF;
END $$;

-- Quiet acks (provider.QuietAcker), a commit batch's in one call, after its
-- dx_ack_work_items queued their results: whether each instance is unlocked
-- and its history still ends at the given event of the given incarnation and
-- execution. Each check first takes the instance's advisory lock, shared (the
-- quiet acks of one instance do not exclude each other), which every fetch
-- and cached-turn claim takes exclusively, and holds it to the commit:
--   - a fetch under way (holding it) makes the check fail at once, never wait;
--   - a fetch that locks the instance after the check cannot until the
--     results are committed, and then sees them queued;
--   - one that locked it earlier shows its lock here (or has changed the
--     history): the check reads after the lock, in a statement of its own.
CREATE FUNCTION dx_quiet_checks(p_instances TEXT[], p_incarnations BIGINT[], p_executions BIGINT[], p_last_events BIGINT[])
RETURNS BOOLEAN[] LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_locked BOOLEAN[];
BEGIN
    SELECT array_agg(pg_try_advisory_xact_lock_shared(hashtext(current_schema() || '/' || u.inst)) ORDER BY u.k)
    INTO v_locked
    FROM unnest(p_instances) WITH ORDINALITY AS u(inst, k);
    RETURN (
        -- Scalar probes, not EXISTS (see dx_claim_cached_turns).
        SELECT array_agg(
            v_locked[u.k]
            AND (SELECT true FROM instances i WHERE i.instance_id = u.inst AND i.incarnation = u.inc
                 AND i.current_execution_id = u.ex) IS NOT NULL
            AND (SELECT true FROM instance_locks l WHERE l.instance_id = u.inst AND l.locked_until > now()) IS NULL
            AND (SELECT max(h.event_id) FROM history h WHERE h.instance_id = u.inst AND h.execution_id = u.ex)
                IS NOT DISTINCT FROM u.last
            ORDER BY u.k)
        FROM unnest(p_instances, p_incarnations, p_executions, p_last_events) WITH ORDINALITY AS u(inst, inc, ex, last, k));
END $$;

-- Watch's two reads (watch.go). As functions their plans are cached per
-- session: as plain statements PostgreSQL planned them on every call (a
-- custom plan for each array of IDs), which cost more than running them.
CREATE FUNCTION dx_announced_changes(p_ids TEXT[], p_start TEXT, p_watermark BIGINT)
RETURNS TABLE (instance_id TEXT, execution_id BIGINT, status TEXT, custom_status_version BIGINT, status_seq BIGINT)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off
    SET enable_mergejoin = off AS $$
BEGIN
    RETURN QUERY
    SELECT i.instance_id, i.current_execution_id, COALESCE(e.status, 'Running'), i.custom_status_version, i.status_seq
    FROM instances i
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    WHERE i.instance_id = ANY (p_ids) AND i.status_seq > 0 AND i.status_xid >= p_watermark
      AND NOT pg_visible_in_snapshot(i.status_xid::TEXT::xid8, p_start::pg_snapshot)
    ORDER BY i.status_seq;
END $$;

CREATE FUNCTION dx_changes_since(p_watermark BIGINT, p_start TEXT)
RETURNS TABLE (instance_id TEXT, execution_id BIGINT, status TEXT, custom_status_version BIGINT, status_seq BIGINT,
               xmin BIGINT, xmax BIGINT)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off
    SET enable_mergejoin = off AS $$
BEGIN
    RETURN QUERY
    WITH snap AS (
        SELECT pg_snapshot_xmin(s)::TEXT::BIGINT AS xmin, pg_snapshot_xmax(s)::TEXT::BIGINT AS xmax
        FROM pg_current_snapshot() AS s)
    SELECT i.instance_id, i.current_execution_id, COALESCE(e.status, 'Running'), i.custom_status_version,
           i.status_seq, snap.xmin, snap.xmax
    FROM snap
    LEFT JOIN instances i ON i.status_xid >= p_watermark AND i.status_xid < snap.xmin
          AND NOT pg_visible_in_snapshot(i.status_xid::TEXT::xid8, p_start::pg_snapshot)
    LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    ORDER BY i.status_seq;
END $$;
