package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// ReadHistory implements provider.Provider. A corrupt stored event fails the
// read with an error that names the instance and the event.
func (p *Provider) ReadHistory(ctx context.Context, req provider.ExecutionRequest) ([]provider.Event, error) {
	if req.ExecutionID != 0 {
		return p.readHistoryExecution(ctx, req.Instance, req.ExecutionID)
	}
	instance := req.Instance
	return p.readHistory(ctx, "read history", instance, `
		SELECT i.current_execution_id, h.event_id, h.event_data FROM history h
		JOIN instances i ON i.instance_id = h.instance_id AND i.current_execution_id = h.execution_id
		WHERE h.instance_id = $1 ORDER BY h.event_id`, instance)
}

func (p *Provider) readHistoryExecution(ctx context.Context, instance string, executionID int64) ([]provider.Event, error) {
	return p.readHistory(ctx, "read execution history", instance, `
		SELECT execution_id, event_id, event_data FROM history
		WHERE instance_id = $1 AND execution_id = $2 ORDER BY event_id`, instance, executionID)
}

func (p *Provider) readHistory(ctx context.Context, op, instance, query string, args ...any) ([]provider.Event, error) {
	rows, err := p.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, classify(op, instance, err)
	}
	defer rows.Close()
	var execution int64
	var ids []int64
	var data []string
	for rows.Next() {
		var id int64
		var d string
		if err := rows.Scan(&execution, &id, &d); err != nil {
			return nil, classify(op, instance, err)
		}
		ids, data = append(ids, id), append(data, d)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(op, instance, err)
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
	_, err = p.pool.Exec(ctx, `SELECT dx_append_history($1, $2, $3, $4, $5)`, instance, executionID,
		nonNil(a.eventIDs), nonNil(a.eventKinds), nonNil(a.eventData))
	return classify(op, instance, err)
}

// GetCustomStatus implements provider.Provider. One query: the value travels
// only when the version moved.
func (p *Provider) GetCustomStatus(ctx context.Context, req provider.CustomStatusRequest) (provider.CustomStatus, bool, error) {
	instance, knownVersion := req.Instance, req.KnownVersion
	const op = "get custom status"
	var cs provider.CustomStatus
	err := p.pool.QueryRow(ctx, `
		SELECT custom_status_version, CASE WHEN custom_status_version = $2 THEN NULL ELSE custom_status END
		FROM instances WHERE instance_id = $1`, instance, knownVersion).Scan(&cs.Version, &cs.Value)
	if errors.Is(err, pgx.ErrNoRows) {
		return cs, false, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return cs, false, classify(op, instance, err)
	}
	return cs, cs.Version != knownVersion, nil
}
