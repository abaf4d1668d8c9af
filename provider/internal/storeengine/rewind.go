package storeengine

import (
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
)

// RewindTarget is what a store read, in the transaction that would queue a
// rewind, about the instance it names.
type RewindTarget struct {
	Current int64
	Status  provider.ExecutionStatus
	Parent  string
	// Queued: a rewind of the instance is queued already.
	Queued bool
}

// CheckRewind refuses, wrapping provider.ErrNotRewindable, a rewind the
// instance cannot take: only a failed root instance's current execution is
// rewound, once.
func CheckRewind(t RewindTarget, req provider.RewindRequest) error {
	failed := req.Item.ExecutionID - 1
	switch {
	case t.Parent != "":
		return fmt.Errorf("%w: it is a sub-orchestration of %q (rewind the root: a parent waits for its child's first result only)", provider.ErrNotRewindable, t.Parent)
	case t.Queued:
		return fmt.Errorf("%w: a rewind of it is queued already", provider.ErrNotRewindable)
	case t.Current != failed:
		return fmt.Errorf("%w: its current execution is %d, not %d", provider.ErrNotRewindable, t.Current, failed)
	case t.Status != provider.StatusFailed:
		return fmt.Errorf("%w: it is %s, not Failed", provider.ErrNotRewindable, t.Status)
	}
	return nil
}
