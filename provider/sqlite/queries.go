package sqlite

import "github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"

// queries is the store's typed SQL: internal/dbsqlc/*.sql, compiled by sqlc
// (sqlc.yaml, make generate) into Go. It holds no state; each call takes what
// to run on: p.stmts for reads, the write transaction's *txn for writes,
// both running each statement prepared once per connection
// (statements.go).
//
// SQL that stays in Go, and why:
//   - the ready scan (readyInstancesQuery) and the history read
//     (readHistoryQuery): each stops reading rows early (max instances; the
//     first row that does not continue the cached events), where a
//     generated query reads every row into a slice first;
//   - savepoints (write_batch.go): transaction control, which sqlc does not
//     compile;
//   - migrations (migrate.go): whole files, and the version table named by
//     a variable.
var queries = dbsqlc.New()
