package sqlite

import (
	"context"
	"database/sql"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// InTx is tx, a transaction on the store's database file, for a start or
// an event to join (runtime.Client.StartTx, RaiseEventTx). Begin it on
// Provider.DB, whose connections take the write lock when a transaction
// begins: the store's own writes wait until it ends, so keep it short.
// Dispatchers find what it queued at their next poll after it commits.
func InTx(tx *sql.Tx) provider.Tx { return callerTx{tx} }

type callerTx struct{ tx *sql.Tx }

func (callerTx) Store() string { return "sqlite" }

// joined is the caller's transaction as the store's queries run in it: no
// prepared statements (they belong to the store's connections) and a status
// sequence of its own.
func joined(ctx context.Context, op string, tx provider.Tx) (*txn, error) {
	t, ok := tx.(callerTx)
	if !ok || t.tx == nil {
		return nil, encode.Invalid(op, "", "not a SQLite transaction (sqlite.InTx)")
	}
	return &txn{Tx: t.tx, ctx: ctx, seq: &statusSeq{}}, nil
}

// StartInTx implements provider.TxStarter.
func (p *Provider) StartInTx(ctx context.Context, tx provider.Tx, req provider.StartRequest) error {
	const op = "start"
	start := req.Start
	t, err := joined(ctx, op, tx)
	if err != nil {
		return err
	}
	enc, err := encode.EncodeStartInTx(op, req)
	if err != nil {
		return err
	}
	if err := admitStart(ctx, t, op, start, enc); err != nil {
		return err
	}
	return classify(op, start.Instance, t.seq.store(ctx, t))
}

// SendInTx implements provider.TxStarter.
func (p *Provider) SendInTx(ctx context.Context, tx provider.Tx, item provider.WorkItem) error {
	const op = "send"
	t, err := joined(ctx, op, tx)
	if err != nil {
		return err
	}
	data, err := encode.EncodeItem(op, item, false)
	if err != nil {
		return err
	}
	return sendIn(ctx, t, op, item, data)
}
