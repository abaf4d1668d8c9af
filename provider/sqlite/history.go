package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// ReadHistory implements provider.Provider. A corrupt stored event fails the
// read with an error that names the instance and the event.
func (p *Provider) ReadHistory(ctx context.Context, req provider.ExecutionRequest) ([]provider.Event, error) {
	if req.ExecutionID != 0 {
		return p.readHistoryExecution(ctx, req.Instance, req.ExecutionID)
	}
	instance := req.Instance
	const op = "read history"
	current, err := queries.InstanceCurrentExecution(ctx, p.stmts, instance)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(op, instance, err)
	}
	return p.readExecution(ctx, op, instance, current)
}

func (p *Provider) readHistoryExecution(ctx context.Context, instance string, executionID int64) ([]provider.Event, error) {
	return p.readExecution(ctx, "read execution history", instance, executionID)
}

func (p *Provider) readExecution(ctx context.Context, op, instance string, executionID int64) ([]provider.Event, error) {
	events, decodeErr, err := readHistory(ctx, p.db, instance, executionID)
	if err != nil {
		return nil, classify(op, instance, err)
	}
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
	return p.writeTx(ctx, op, func(tx *txn) error {
		_, err := queries.ExecutionExists(ctx, tx, dbsqlc.ExecutionExistsParams{InstanceID: instance, ExecutionID: executionID})
		if errors.Is(err, sql.ErrNoRows) {
			return provider.Permanent(op, instance, fmt.Errorf("%w: execution %d", provider.ErrNotFound, executionID))
		}
		if err != nil {
			return fmt.Errorf("read execution: %w", err)
		}
		return appendEvents(ctx, tx, op, instance, executionID, enc.Events, nowMs())
	})
}

// GetCustomStatus implements provider.Provider. One query: the value travels
// only when the version moved.
func (p *Provider) GetCustomStatus(ctx context.Context, req provider.CustomStatusRequest) (provider.CustomStatus, bool, error) {
	instance, knownVersion := req.Instance, req.KnownVersion
	const op = "get custom status"
	row, err := queries.CustomStatusIfChanged(ctx, p.stmts, dbsqlc.CustomStatusIfChangedParams{InstanceID: instance, KnownVersion: knownVersion})
	version, value := row.CustomStatusVersion, row.CustomStatus
	if errors.Is(err, sql.ErrNoRows) {
		return provider.CustomStatus{}, false, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return provider.CustomStatus{}, false, classify(op, instance, err)
	}
	cs := provider.CustomStatus{Version: version}
	if value.Valid {
		cs.Value = &value.String
	}
	return cs, version != knownVersion, nil
}
