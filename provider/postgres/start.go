package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// Start implements storeengine.Driver: dx_start_instance checks the ID,
// replaces what holds it when the policy allows, and queues the start and
// its events, in one transaction that no other start of the ID interleaves.
func (d driver) Start(ctx context.Context, req provider.StartRequest) error {
	const op = "start"
	p, start := d.p, req.Start
	enc, err := encode.EncodeStart(op, start, req.Events, req.Reuse)
	if err != nil {
		return err
	}
	_, err = p.pool.Exec(ctx, startQuery, start.Instance, enc.Data, start.Owner, enc.Events, string(enc.Reuse), start.Name, start.Version)
	if err == nil {
		p.announce(orchestratorChannel)
	}
	return classify(op, start.Instance, err)
}

// StartLocking implements storeengine.Driver: the start and the fetch of
// its instance in one batch (one transaction).
func (d driver) StartLocking(ctx context.Context, req provider.StartRequest) (*provider.OrchestrationItem, error) {
	const op = "start"
	p, start, reuse, lockTimeout := d.p, req.Start, req.Reuse, req.LockFor
	if err := encode.CheckTimeouts(op, lockTimeout, 0); err != nil {
		return nil, err
	}
	enc, err := encode.EncodeStart(op, start, nil, reuse)
	if err != nil {
		return nil, err
	}
	if err := p.eng.CheckOpen(op); err != nil {
		return nil, err
	}
	turn, err := p.sendContinuing(ctx, commitWork{
		before: statements{
			queue: func(b *pgx.Batch) {
				b.Queue(startQuery, start.Instance, enc.Data, start.Owner, []string{}, string(enc.Reuse), start.Name, start.Version)
			},
			read: func(br pgx.BatchResults) error { _, err := br.Exec(); return err },
		},
		fetch: &instanceFetch{instance: start.Instance, lockTimeout: lockTimeout},
	})
	if err != nil {
		return nil, classify(op, start.Instance, err)
	}
	return turn, nil
}

const startQuery = `SELECT dx_start_instance($1, $2, $3, $4, $5, $6, $7)`

// alreadyExists reads dx_start_instance's DX009 DETAIL: what holds the ID.
func alreadyExists(instance, detail string) *provider.AlreadyExistsError {
	var holder struct{ Status, Owner, Why string }
	_ = json.Unmarshal([]byte(detail), &holder) // a detail that does not decode still says the ID is taken
	return &provider.AlreadyExistsError{Instance: instance, Status: provider.ExecutionStatus(holder.Status), Owner: holder.Owner, Why: holder.Why}
}
