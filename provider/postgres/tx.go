package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// InTx is tx, a transaction on the store's database, for a start or an
// event to join (runtime.Client.StartTx, RaiseEventTx). The store's schema
// must be in that database; the caller's search_path does not matter.
func InTx(tx pgx.Tx) provider.Tx { return callerTx{tx} }

type callerTx struct{ tx pgx.Tx }

func (callerTx) Store() string { return "postgres" }

// txOf is the caller's pgx.Tx that tx wraps.
func txOf(op string, tx provider.Tx) (pgx.Tx, error) {
	t, ok := tx.(callerTx)
	if !ok || t.tx == nil {
		return nil, encode.Invalid(op, "", "not a PostgreSQL transaction (postgres.InTx)")
	}
	return t.tx, nil
}

// StartInTx implements provider.TxStarter. The NOTIFY that wakes
// dispatchers is sent in the caller's transaction, so they hear of the
// start when, and only if, it commits.
func (p *Provider) StartInTx(ctx context.Context, tx provider.Tx, req provider.StartRequest) error {
	const op = "start"
	start := req.Start
	t, err := txOf(op, tx)
	if err != nil {
		return err
	}
	enc, err := encode.EncodeStartInTx(op, req)
	if err != nil {
		return err
	}
	_, err = t.Exec(ctx, `SELECT `+quoteIdent(p.schema)+`.dx_start_in_tx($1, $2, $3, $4, $5, $6, $7), pg_notify($8, '')`,
		start.Instance, enc.Data, start.Owner, nonNil(enc.Events), string(enc.Reuse), start.Name, start.Version,
		p.channel(channelSuffix[orchestratorChannel]))
	return classify(op, start.Instance, err)
}

// SendInTx implements provider.TxStarter.
func (p *Provider) SendInTx(ctx context.Context, tx provider.Tx, item provider.WorkItem) error {
	const op = "send"
	t, err := txOf(op, tx)
	if err != nil {
		return err
	}
	data, err := encode.EncodeItem(op, item, false)
	if err != nil {
		return err
	}
	_, err = t.Exec(ctx, `SELECT `+quoteIdent(p.schema)+`.dx_send_in_tx($1, $2), pg_notify($3, '')`,
		item.Instance, data, p.channel(channelSuffix[orchestratorChannel]))
	return classify(op, item.Instance, err)
}
