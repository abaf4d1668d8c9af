package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// statementCache keeps the provider's statements prepared: SQLite's parser
// and planner cost more than most of these statements take to run (a quarter
// of a turn's CPU went to parsing). Statements are database/sql Stmts, which
// are prepared once on each connection that runs them.
//
// A statement is prepared after the transaction that first asked for it:
// preparing inside it would need a second connection, and an in-memory store
// has only one.
type statementCache struct {
	db       *sql.DB
	mu       sync.Mutex
	prepared map[string]*sql.Stmt
	wanted   map[string]bool
	closed   bool
}

func newStatementCache(db *sql.DB) *statementCache {
	return &statementCache{db: db, prepared: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// lookup returns query's prepared statement, or nil (asking for it to be
// prepared) when there is none yet.
func (c *statementCache) lookup(query string) *sql.Stmt {
	if c == nil { // a caller's transaction (InTx): nothing prepared for it
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.prepared[query]; ok {
		return st
	}
	c.wanted[query] = true
	return nil
}

// prepareWanted prepares the statements asked for since its last call. It
// must run while the caller holds no connection. A statement that fails to
// prepare (the store closing) is asked for again when it next runs.
func (c *statementCache) prepareWanted(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	c.mu.Lock()
	if len(c.wanted) == 0 || c.closed {
		c.mu.Unlock()
		return
	}
	var queries []string
	for q := range c.wanted {
		queries = append(queries, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range queries {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		_, dup := c.prepared[q]
		if c.closed || dup {
			c.mu.Unlock()
			_ = st.Close()
			continue
		}
		c.prepared[q] = st
		c.mu.Unlock()
	}
}

func (c *statementCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, st := range c.prepared {
		_ = st.Close()
	}
	clear(c.prepared)
}

// QueryRowContext runs a read outside any transaction, prepared once it has
// been asked for (it is prepared after the next write transaction).
func (c *statementCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := c.lookup(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.db.QueryRowContext(ctx, query, args...)
}

// errWriteOutsideTx refuses a write through the statement cache: every
// write goes through the store's one writer (writeTx).
var errWriteOutsideTx = errors.New("sqlite: a write outside the store's write transaction")

// ExecContext refuses: the cache runs reads only (errWriteOutsideTx).
func (c *statementCache) ExecContext(context.Context, string, ...any) (sql.Result, error) {
	return nil, errWriteOutsideTx
}

// PrepareContext prepares query on the database.
func (c *statementCache) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return c.db.PrepareContext(ctx, query)
}

// QueryContext runs a read outside any transaction, prepared as QueryRowContext is.
func (c *statementCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.lookup(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, query, args...)
}

// txn is a transaction that runs the cache's prepared statements. Its
// statements run under ctx, whatever context they are given: the transaction
// may commit other callers' work too, and SQLite rolls back a whole
// transaction when a write in it is interrupted.
type txn struct {
	*sql.Tx
	stmts *statementCache
	ctx   context.Context
	seq   *statusSeq
}

func (t *txn) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmts.lookup(query); st != nil {
		return t.Tx.StmtContext(t.ctx, st).ExecContext(t.ctx, args...)
	}
	return t.Tx.ExecContext(t.ctx, query, args...)
}

func (t *txn) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmts.lookup(query); st != nil {
		return t.Tx.StmtContext(t.ctx, st).QueryContext(t.ctx, args...)
	}
	return t.Tx.QueryContext(t.ctx, query, args...)
}

func (t *txn) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	if st := t.stmts.lookup(query); st != nil {
		return t.Tx.StmtContext(t.ctx, st).QueryRowContext(t.ctx, args...)
	}
	return t.Tx.QueryRowContext(t.ctx, query, args...)
}
