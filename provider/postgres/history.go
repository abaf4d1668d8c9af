package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

// ReadHistory implements provider.Provider. A corrupt stored event fails the
// read with an error that names the instance and the event.
func (p *Provider) ReadHistory(ctx context.Context, req provider.ExecutionRequest) ([]provider.Event, error) {
	instance := req.Instance
	var rows []dbsqlc.HistoryOfExecutionRow
	var err error
	op := "read history"
	if req.ExecutionID != 0 {
		op = "read execution history"
		rows, err = queries.HistoryOfExecution(ctx, p.pool, dbsqlc.HistoryOfExecutionParams{InstanceID: instance, ExecutionID: req.ExecutionID})
	} else {
		var current []dbsqlc.HistoryCurrentRow
		current, err = queries.HistoryCurrent(ctx, p.pool, instance)
		for _, r := range current {
			rows = append(rows, dbsqlc.HistoryOfExecutionRow(r))
		}
	}
	if err != nil {
		return nil, classify(op, instance, err)
	}
	var execution int64
	ids, data := make([]int64, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		execution, ids[i], data[i] = r.ExecutionID, r.EventID, r.EventData
	}
	events, decodeErr := decodeEvents(instance, execution, ids, data, nil)
	if decodeErr != nil {
		return events, provider.Permanent(op, instance, decodeErr)
	}
	return events, nil
}

// AppendHistory implements provider.Admin.
func (p *Provider) AppendHistory(ctx context.Context, req provider.AppendRequest) error {
	instance, executionID, events := req.Instance, req.ExecutionID, req.Events
	const op = "append history"
	enc, err := encode.EncodeAck(op, provider.OrchestrationAck{ExecutionID: executionID, HistoryDelta: events})
	if err != nil {
		return err
	}
	a := newAckBatchArgs([]*turnAck{{enc: enc}})
	err = queries.HistoryAppend(ctx, p.pool, dbsqlc.HistoryAppendParams{InstanceID: instance, ExecutionID: executionID,
		EventIds: nonNil(a.eventIDs), EventKinds: nonNil(a.eventKinds), EventData: nonNil(a.eventData)})
	return classify(op, instance, err)
}

// GetCustomStatus implements provider.Provider. One query: the value travels
// only when the version moved.
func (p *Provider) GetCustomStatus(ctx context.Context, req provider.CustomStatusRequest) (provider.CustomStatus, bool, error) {
	instance, knownVersion := req.Instance, req.KnownVersion
	const op = "get custom status"
	var cs provider.CustomStatus
	row, err := queries.CustomStatusIfChanged(ctx, p.pool, dbsqlc.CustomStatusIfChangedParams{InstanceID: instance, KnownVersion: knownVersion})
	cs.Version, cs.Value = row.CustomStatusVersion, row.CustomStatus
	if errors.Is(err, pgx.ErrNoRows) {
		return cs, false, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return cs, false, classify(op, instance, err)
	}
	return cs, cs.Version != knownVersion, nil
}
