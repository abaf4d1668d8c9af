-- +goose Up
-- A queued StartOrchestration's orchestration and requested version ("" for
-- the latest), so that a fetch with a capability filter (provider.Capability)
-- leaves a start its build cannot run to one that can, without reading the
-- message. NULL on every other message.
ALTER TABLE orchestrator_queue ADD COLUMN start_name TEXT, ADD COLUMN start_version TEXT;

-- +goose Down
ALTER TABLE orchestrator_queue DROP COLUMN start_name, DROP COLUMN start_version;
