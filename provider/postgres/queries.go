package postgres

import "github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"

// queries is the store's typed SQL: internal/dbsqlc/*.sql, compiled by sqlc
// (sqlc.yaml, make generate) into Go, with functions.sql read as schema so
// the calls of the dx_* functions are typed too. It holds no state; each
// call takes the pool or transaction to run on.
//
// SQL that stays in Go, and why:
//   - statements queued into a commit batch (turn_ack.go, work_ack.go,
//     cached_turn.go, instance_fetch.go, shortcuts.go, start.go): a batch
//     is shared by many callers' work and sent once (commit_group.go);
//     sqlc's calls run alone. The turn ack's call names its arguments
//     (named_call.go).
//   - fetches of turns (orchestrator.go) and Watch's reads (watch.go):
//     sqlc does not read the columns of a RETURNS TABLE function, and
//     these share their scanner with the batched fetch;
//   - pg_notify over two arrays (notify.go): sqlc cannot type a
//     multi-argument unnest;
//   - DDL and its bookkeeping (migrate.go, functions.go, Drop): identifiers
//     and whole files, not parameters.
var queries = dbsqlc.New()
