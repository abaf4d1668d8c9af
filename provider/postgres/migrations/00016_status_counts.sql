-- +goose Up
-- Instance counts by status, kept as the store writes, so that
-- GetSystemMetrics reads a few rows instead of counting instances:
--   - an execution counts under its status while it is its instance's
--     newest; opening the next one (continue-as-new, rewind) moves the count;
--   - the statements that write executions (functions.sql, the rewind query)
--     append deltas: inserts never wait on each other, so concurrent commits
--     do not contend, and there is no index to update;
--   - GetSystemMetrics sums the rows and folds them into one per status.
CREATE TABLE status_counts (
    status TEXT NOT NULL,
    n      BIGINT NOT NULL
);

INSERT INTO status_counts (status, n)
SELECT e.status, count(*) FROM executions e
WHERE NOT EXISTS (SELECT 1 FROM executions x WHERE x.instance_id = e.instance_id AND x.execution_id > e.execution_id)
GROUP BY e.status;

-- +goose Down
DROP TABLE status_counts;
