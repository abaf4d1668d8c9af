package sqlite

import (
	"context"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// ReadValues implements provider.Provider.
func (p *Provider) ReadValues(ctx context.Context, req provider.ValuesRequest) (map[string]string, error) {
	const op = "read values"
	if req.Instance == "" {
		return nil, encode.Invalid(op, "", "an instance ID is required")
	}
	rows, err := queries.InstanceValues(ctx, p.stmts, dbsqlc.InstanceValuesParams{Keys: jsonArray(req.Keys).String, InstanceID: req.Instance})
	if err != nil {
		return nil, classify(op, req.Instance, err)
	}
	if len(rows) == 0 {
		return nil, provider.Permanent(op, req.Instance, provider.ErrNotFound)
	}
	values := map[string]string{}
	for _, r := range rows {
		if r.Key.Valid {
			values[r.Key.String] = r.Value.String
		}
	}
	return values, nil
}

// writeValues applies a turn's values update to its instance.
func writeValues(ctx context.Context, tx *txn, instance string, executionID int64, u *provider.ValuesUpdate, now int64) error {
	if u == nil {
		return nil
	}
	if u.Replace {
		if err := queries.ValuesClearAll(ctx, tx, instance); err != nil {
			return fmt.Errorf("clear values of %q: %w", instance, err)
		}
	}
	for k, v := range u.Set {
		err := queries.ValueSet(ctx, tx, dbsqlc.ValueSetParams{InstanceID: instance, Key: k, Value: v, ExecutionID: executionID, UpdatedAt: now})
		if err != nil {
			return fmt.Errorf("set value %q of %q: %w", k, instance, err)
		}
	}
	for _, k := range u.Clear {
		if err := queries.ValueClear(ctx, tx, dbsqlc.ValueClearParams{InstanceID: instance, Key: k}); err != nil {
			return fmt.Errorf("clear value %q of %q: %w", k, instance, err)
		}
	}
	return nil
}
