-- +goose Up
-- These functions' statements all look rows up by key (instance, token): a generic plan is as good as
-- a custom one, and keeping it saves planning every statement of every call
-- (PostgreSQL re-plans a parameterised statement until a generic plan looks
-- cheap enough, which for array parameters it never does).
ALTER FUNCTION dx_ack_orchestration_item(TEXT, BIGINT, BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT, TEXT, TEXT, TEXT, TEXT, BOOLEAN, TEXT, TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[]) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION dx_ack_work_item(TEXT, TEXT, TEXT) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION dx_fetch_instance_item(TEXT, BIGINT) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION dx_enqueue_orchestrator(TEXT, TEXT, BIGINT, BIGINT) SET plan_cache_mode = force_generic_plan;

-- +goose Down
ALTER FUNCTION dx_ack_orchestration_item(TEXT, BIGINT, BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT, TEXT, TEXT, TEXT, TEXT, BOOLEAN, TEXT, TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[]) RESET plan_cache_mode;
ALTER FUNCTION dx_ack_work_item(TEXT, TEXT, TEXT) RESET plan_cache_mode;
ALTER FUNCTION dx_fetch_instance_item(TEXT, BIGINT) RESET plan_cache_mode;
ALTER FUNCTION dx_enqueue_orchestrator(TEXT, TEXT, BIGINT, BIGINT) RESET plan_cache_mode;
