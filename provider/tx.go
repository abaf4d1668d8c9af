package provider

import "context"

// Tx is a transaction of the caller's, on the store's database, that a
// start or an event joins (TxStarter): postgres.InTx wraps a pgx.Tx,
// sqlite.InTx a *sql.Tx. What joins it commits or rolls back with the
// caller's own writes: an order row and the orchestration that fulfils it
// exist together or not at all, with no outbox.
type Tx interface {
	// Store names the kind of store the transaction belongs to
	// ("postgres", "sqlite").
	Store() string
}

// TxStarter is the part of a provider that starts instances and sends
// messages inside the caller's transaction. Nothing is visible to
// dispatchers or clients until the caller commits; a rollback leaves no
// trace. A Tx of another kind of store gets ErrInvalidArgument.
type TxStarter interface {
	// StartInTx is StartInstance inside tx (req.LockFor must be 0: a turn
	// cannot run before the caller commits). Its checks of the ID read
	// what tx sees.
	StartInTx(ctx context.Context, tx Tx, req StartRequest) error
	// SendInTx is SendToInstance inside tx.
	SendInTx(ctx context.Context, tx Tx, item WorkItem) error
}
