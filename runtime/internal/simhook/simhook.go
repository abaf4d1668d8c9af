// Package simhook is the seam through which runtime/runtimetest drives the
// replay engine in memory. Package runtime fills these in at init; keeping
// them here, internal, keeps the engine's inputs and outputs (provider items
// and acks) out of runtime's public API.
package simhook

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

var (
	// RunTurn runs one turn of item at now with the orchestrations of reg (a
	// *runtime.Registry). ran is false when the item had nothing to run; the
	// ack then holds only replies the provider must still send. local runs
	// the turn's WithLocal activities (an ActivityExecute item in, its
	// completion out), as RunActivity would.
	RunTurn func(reg any, item *provider.OrchestrationItem, now time.Time, logger *slog.Logger,
		local func(provider.WorkItem) provider.WorkItem) (ack provider.OrchestrationAck, ran bool, err error)
	// RunActivity executes the ActivityExecute item with the first of regs (each
	// a *runtime.Registry) that has the activity, and returns the completion
	// (ActivityCompleted or ActivityFailed) a worker would report.
	RunActivity func(ctx context.Context, item provider.WorkItem, attempt int, regs ...any) provider.WorkItem
	// ActivityType reports whether reg (a *runtime.Registry) has the activity
	// name and, when it was registered typed, its function's type
	// (func(context.Context, In) (Out, error)); nil when it was added untyped.
	ActivityType func(reg any, name string) (typ reflect.Type, registered bool)
	// EncodePayload encodes a value as runtime.Client does.
	EncodePayload func(v any) (string, error)
	// Status builds a runtime.Status (returned as any) from an instance's state.
	Status func(info provider.InstanceInfo) any
)
