package postgres

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

// ReadValues implements provider.Provider. Turns write values in
// dx_ack_orchestration_items.
func (p *Provider) ReadValues(ctx context.Context, req provider.ValuesRequest) (map[string]string, error) {
	const op = "read values"
	if req.Instance == "" {
		return nil, encode.Invalid(op, "", "an instance ID is required")
	}
	rows, err := queries.InstanceValues(ctx, p.pool, dbsqlc.InstanceValuesParams{Keys: nonNil(req.Keys), InstanceID: req.Instance})
	if err != nil {
		return nil, classify(op, req.Instance, err)
	}
	if len(rows) == 0 {
		return nil, provider.Permanent(op, req.Instance, provider.ErrNotFound)
	}
	values := map[string]string{}
	for _, r := range rows {
		if r.Key != nil && r.Value != nil {
			values[*r.Key] = *r.Value
		}
	}
	return values, nil
}
