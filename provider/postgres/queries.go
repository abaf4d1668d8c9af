package postgres

import "github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"

// queries is the store's typed SQL: internal/dbsqlc/*.sql, compiled by sqlc
// (sqlc.yaml, make generate) into Go. It holds no state; each call takes the
// connection or transaction to run on.
var queries = dbsqlc.New()
