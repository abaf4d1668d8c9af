-- +goose Up
-- Each instance's durable values (provider.ValuesUpdate), as its last
-- committed turn left them: what clients read. Replay does not read them:
-- an execution's history carries its starting values.
CREATE TABLE instance_values (
    instance_id  TEXT NOT NULL,
    key          TEXT NOT NULL,
    value        TEXT NOT NULL,
    execution_id BIGINT NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (instance_id, key)
);

-- +goose Down
DROP TABLE instance_values;
