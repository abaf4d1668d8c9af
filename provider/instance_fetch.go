package provider

import (
	"context"
	"time"
)

// InstanceFetcher is implemented by providers that can lock one named
// instance. A process that must run a turn no worker will run (terminating an
// instance whose workers are gone, see runtime.Client.TerminateNow) uses it.
type InstanceFetcher interface {
	// FetchInstanceItem locks instance and returns its visible messages, history
	// and state, as FetchOrchestrationItems would return it. It returns nil,
	// without waiting, when a live lock holds the instance or it has no visible
	// message.
	FetchInstanceItem(ctx context.Context, instance string, lockTimeout time.Duration) (*OrchestrationItem, error)
}
