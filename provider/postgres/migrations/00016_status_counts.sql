-- +goose Up
-- Instance counts by status, kept by triggers on executions, so that
-- GetSystemMetrics reads a few rows instead of counting instances:
--   - an execution counts under its status while it is its instance's
--     newest; opening the next one (continue-as-new, rewind) moves the count;
--   - the triggers append deltas, one row per status and statement: inserts
--     never wait on each other, so concurrent commits do not contend;
--   - GetSystemMetrics sums the rows and folds them into one per status.
CREATE TABLE status_counts (
    id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    status TEXT NOT NULL,
    n      BIGINT NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION status_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO status_counts (status, n)
    SELECT d.status, sum(d.n) FROM (
        SELECT a.status, 1 AS n FROM added a
        UNION ALL
        SELECT p.status, -1 FROM added a
        JOIN executions p ON p.instance_id = a.instance_id AND p.execution_id = a.execution_id - 1
    ) d GROUP BY d.status HAVING sum(d.n) <> 0;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION status_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO status_counts (status, n)
    SELECT d.status, sum(d.n) FROM (
        SELECT c.status, c.n FROM changed_from o
        JOIN changed_to t ON t.instance_id = o.instance_id AND t.execution_id = o.execution_id
        CROSS JOIN LATERAL (VALUES (o.status, -1), (t.status, 1)) AS c(status, n)
        WHERE o.status <> t.status
          AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.instance_id = t.instance_id AND x.execution_id > t.execution_id)
    ) d GROUP BY d.status HAVING sum(d.n) <> 0;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION status_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO status_counts (status, n)
    SELECT r.status, -count(*) FROM removed r
    WHERE NOT EXISTS (SELECT 1 FROM removed x WHERE x.instance_id = r.instance_id AND x.execution_id > r.execution_id)
      AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.instance_id = r.instance_id AND x.execution_id > r.execution_id)
    GROUP BY r.status;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER status_counts_insert AFTER INSERT ON executions
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION status_counts_inserted();
CREATE TRIGGER status_counts_update AFTER UPDATE ON executions
    REFERENCING OLD TABLE AS changed_from NEW TABLE AS changed_to FOR EACH STATEMENT EXECUTE FUNCTION status_counts_updated();
CREATE TRIGGER status_counts_delete AFTER DELETE ON executions
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION status_counts_deleted();

INSERT INTO status_counts (status, n)
SELECT e.status, count(*) FROM executions e
WHERE NOT EXISTS (SELECT 1 FROM executions x WHERE x.instance_id = e.instance_id AND x.execution_id > e.execution_id)
GROUP BY e.status;

-- +goose Down
DROP TRIGGER status_counts_insert ON executions;
DROP TRIGGER status_counts_update ON executions;
DROP TRIGGER status_counts_delete ON executions;
DROP FUNCTION status_counts_inserted(), status_counts_updated(), status_counts_deleted();
DROP TABLE status_counts;
