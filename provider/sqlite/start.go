package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// Start implements storeengine.Driver: the check of the ID, any
// replacement and the enqueue share one write transaction, and writers take
// turns, so no other start of the ID interleaves.
func (d driver) Start(ctx context.Context, req provider.StartRequest) error {
	const op = "start"
	p, start := d.p, req.Start
	enc, err := encode.EncodeStart(op, start, req.Events, req.Reuse)
	if err != nil {
		return err
	}
	err = p.writeTx(ctx, op, func(tx *txn) error { return admitStart(ctx, tx, op, start, enc) })
	if err == nil {
		p.eng.OrchestratorWork.Notify()
	}
	return err
}

// StartLocking implements storeengine.Driver: the start and the lock of
// its instance in one write transaction.
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
	var turn *provider.OrchestrationItem
	err = p.writeTx(ctx, op, func(tx *txn) error {
		if err := admitStart(ctx, tx, op, start, enc); err != nil {
			return err
		}
		now := nowMs()
		turn, err = lockInstance(ctx, tx, start.Instance, now, now+lockTimeout.Milliseconds())
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.loadHistories(ctx, op, turn) != nil {
		turn = nil // handed back: the start is queued, and a dispatcher takes the turn
	}
	if turn == nil {
		p.eng.OrchestratorWork.Notify()
	}
	return turn, nil
}

// idHolder is what holds an instance ID a start names.
type idHolder struct {
	exists bool // an instance row
	queued bool // no instance row, a queued start
	status provider.ExecutionStatus
	parent string
	owner  string
}

func (h idHolder) free() bool { return !h.exists && !h.queued }

// admitStart queues the start and its events when the ID is free, replaces
// what holds it when the policy allows, does nothing for a retry of the
// start that holds it, and refuses otherwise.
func admitStart(ctx context.Context, tx *txn, op string, start provider.WorkItem, enc encode.Start) error {
	h, err := readIDHolder(ctx, tx, start.Instance)
	if err != nil {
		return classify(op, start.Instance, err)
	}
	switch {
	case h.free():
	case start.Owner != "" && h.owner == start.Owner:
		return nil // a retry of the start that holds the ID
	default:
		if err := replaceHolder(ctx, tx, op, start.Instance, h, enc.Reuse); err != nil {
			return err
		}
	}
	now := nowMs()
	if err := insertOrchestratorItem(ctx, tx, start, enc.Data, now); err != nil {
		return err
	}
	for _, data := range enc.Events {
		ev := provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: start.Instance}
		if err := insertOrchestratorItem(ctx, tx, ev, data, now); err != nil {
			return err
		}
	}
	return nil
}

// readIDHolder reads the instance with the ID, or else its queued start.
func readIDHolder(ctx context.Context, tx *txn, instance string) (idHolder, error) {
	row, err := queries.InstanceIDHolder(ctx, tx, instance)
	if errors.Is(err, sql.ErrNoRows) {
		return readQueuedStart(ctx, tx, instance)
	}
	if err != nil {
		return idHolder{}, fmt.Errorf("read instance %q: %w", instance, err)
	}
	return idHolder{exists: true, status: provider.ExecutionStatus(row.Status), parent: row.ParentInstanceID.String, owner: row.Owner}, nil
}

func readQueuedStart(ctx context.Context, tx *txn, instance string) (idHolder, error) {
	owner, err := queries.QueuedStartOwner(ctx, tx, instance)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return idHolder{}, nil
	case err != nil:
		return idHolder{}, fmt.Errorf("read the queued start of %q: %w", instance, err)
	}
	return idHolder{queued: true, owner: owner}, nil
}

// replaceHolder deletes what holds the ID when reuse allows it, and returns
// the *AlreadyExistsError otherwise.
func replaceHolder(ctx context.Context, tx *txn, op, instance string, h idHolder, reuse provider.IDReusePolicy) error {
	refuse := func(why string) error {
		return provider.Permanent(op, instance, &provider.AlreadyExistsError{Instance: instance, Status: h.status, Owner: h.owner, Why: why})
	}
	if reuse == provider.IDReuseFail {
		return refuse("")
	}
	if h.parent != "" {
		return refuse(fmt.Sprintf("a sub-orchestration of %q, never replaced", h.parent))
	}
	tree := []string{instance}
	if h.exists {
		var err error
		if tree, err = queries.InstanceTree(ctx, tx, instance); err != nil {
			return fmt.Errorf("find descendants of %q: %w", instance, err)
		}
	}
	if reuse == provider.IDReuseAllowFinished {
		if h.queued || !finished(h.status) {
			return refuse("")
		}
		running, err := runningIn(ctx, tx, tree)
		if err != nil {
			return err
		}
		if len(running) > 0 {
			return refuse("its sub-orchestrations " + strings.Join(running, ", ") + " still run")
		}
	}
	_, err := deleteRows(ctx, tx, tree)
	return err
}
