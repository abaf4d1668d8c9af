package runtime_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// callerDB is the caller's own database access on the store's database:
// it begins a transaction, writes a business row in it, and can count the
// committed rows.
type callerDB struct {
	begin func(t *testing.T) (tx provider.Tx, insertOrder func(id string), commit, rollback func())
	count func(t *testing.T) int
}

// fulfilRegistry registers Fulfil, which waits for "paid" and returns the
// order ID it was started with.
func fulfilRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Fulfil", func(ctx *runtime.OrchestrationContext, order string) (string, error) {
		if _, err := runtime.Await[string](ctx.WaitForEvent("paid")); err != nil {
			return "", err
		}
		return "shipped " + order, nil
	})
	return reg
}

// An order row and the orchestration that fulfils it commit or roll back
// together; so do a payment row and the event that reports it.
func TestStartAndRaiseInTheCallersTransaction(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"), sqlite.Options{PollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		testTransactionalStart(t, store, sqliteCaller(t, store.DB()))
	})
	t.Run("postgres", func(t *testing.T) {
		store := pgtest.Open(t)
		testTransactionalStart(t, store, postgresCaller(t))
	})
}

func testTransactionalStart(t *testing.T, store testStore, db callerDB) {
	startRuntime(t, store, fulfilRegistry(), fastOptions())
	c := runtime.NewClient(store)

	tx, insert, _, rollback := db.begin(t)
	insert("order-1")
	if err := c.StartTx(t.Context(), tx, "fulfil-1", "Fulfil", "order-1"); err != nil {
		t.Fatal(err)
	}
	rollback()
	time.Sleep(300 * time.Millisecond) // several polls of the runtime
	if _, err := c.Status(t.Context(), "fulfil-1"); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("status after the rollback: %v, want ErrNotFound", err)
	}
	if n := db.count(t); n != 0 {
		t.Fatalf("orders after the rollback: %d", n)
	}

	tx, insert, commit, _ := db.begin(t)
	insert("order-2")
	if err := c.StartTx(t.Context(), tx, "fulfil-2", "Fulfil", "order-2"); err != nil {
		t.Fatal(err)
	}
	commit()
	// An event raised in a transaction that rolls back is never delivered.
	tx, insert, _, rollback = db.begin(t)
	insert("payment-declined")
	if err := c.RaiseEventTx(t.Context(), tx, "fulfil-2", "paid", "declined"); err != nil {
		t.Fatal(err)
	}
	rollback()
	time.Sleep(300 * time.Millisecond) // several polls of the runtime
	if st, err := c.Status(t.Context(), "fulfil-2"); err != nil || st.Status != runtime.StatusRunning {
		t.Fatalf("status after the raise rolled back: %+v %v, want Running", st, err)
	}
	tx, insert, commit, rollback = db.begin(t)
	insert("payment-2")
	if err := c.RaiseEventTx(t.Context(), tx, "fulfil-2", "paid", "card"); err != nil {
		t.Fatal(err)
	}
	// A second start of the ID in a transaction is refused like Start's.
	if err := c.StartTx(t.Context(), tx, "fulfil-2", "Fulfil", "again"); !errors.Is(err, provider.ErrAlreadyExists) {
		t.Fatalf("a second start of the ID: %v, want ErrAlreadyExists", err)
	}
	if isPostgres(store) {
		rollback() // PostgreSQL aborted the transaction with the refused statement
		tx, insert, commit, _ = db.begin(t)
		insert("payment-2")
		if err := c.RaiseEventTx(t.Context(), tx, "fulfil-2", "paid", "card"); err != nil {
			t.Fatal(err)
		}
	}
	commit()
	st := wait(t, c, "fulfil-2")
	if st.Status != runtime.StatusCompleted || st.Output != `"shipped order-2"` {
		t.Fatalf("got %s %s %v", st.Status, st.Output, st.Failure)
	}
	if n := db.count(t); n != 2 {
		t.Fatalf("rows committed: %d, want the order and the payment", n)
	}
	if err := c.StartTx(t.Context(), otherStoreTx(store), "x", "Fulfil", ""); !errors.Is(err, provider.ErrInvalidArgument) {
		t.Fatalf("a transaction of the other kind of store: %v, want ErrInvalidArgument", err)
	}
}

// otherStoreTx is a transaction handle of the other kind of store.
func otherStoreTx(store testStore) provider.Tx {
	if isPostgres(store) {
		return sqlite.InTx(nil)
	}
	return postgres.InTx(nil)
}

func sqliteCaller(t *testing.T, db *sql.DB) callerDB {
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE shop_rows (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return callerDB{
		begin: func(t *testing.T) (provider.Tx, func(string), func(), func()) {
			tx, err := db.BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			insert := func(id string) {
				if _, err := tx.ExecContext(t.Context(), `INSERT INTO shop_rows (id) VALUES (?)`, id); err != nil {
					t.Fatal(err)
				}
			}
			commit := func() {
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			return sqlite.InTx(tx), insert, commit, func() { _ = tx.Rollback() }
		},
		count: func(t *testing.T) int {
			var n int
			if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM shop_rows`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
	}
}

// postgresCaller connects as the application would: its own connection,
// its own table in the public schema, the store's schema elsewhere.
func postgresCaller(t *testing.T) callerDB {
	conn, err := pgx.Connect(t.Context(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	table := pgx.Identifier{"shop_rows_" + pgtest.RandomSchema()}.Sanitize()
	if _, err := conn.Exec(t.Context(), `CREATE TABLE `+table+` (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), `DROP TABLE `+table) })
	return callerDB{
		begin: func(t *testing.T) (provider.Tx, func(string), func(), func()) {
			tx, err := conn.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			insert := func(id string) {
				if _, err := tx.Exec(t.Context(), `INSERT INTO `+table+` (id) VALUES ($1)`, id); err != nil {
					t.Fatal(err)
				}
			}
			commit := func() {
				if err := tx.Commit(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			return postgres.InTx(tx), insert, commit, func() { _ = tx.Rollback(context.Background()) }
		},
		count: func(t *testing.T) int {
			var n int
			if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
	}
}

func isPostgres(store testStore) bool {
	_, ok := store.(*postgres.Provider)
	return ok
}
