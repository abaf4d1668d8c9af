package storeengine

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// AbandonTurn serves provider.Provider.AbandonOrchestrationItem: a request
// with no token, a negative delay or a cause that does not encode reaches
// no driver.
func (e *Engine) AbandonTurn(ctx context.Context, req provider.AbandonRequest) error {
	const op = "abandon orchestration item"
	if req.LockToken == "" {
		return encode.LockNotHeld(op, "", "empty lock token")
	}
	if err := checkDelay(op, req); err != nil {
		return err
	}
	lastError, err := encode.Cause(op, req.Cause)
	if err != nil {
		return err
	}
	return e.driver.AbandonTurn(ctx, AbandonParams{LockToken: req.LockToken, Delay: req.Delay,
		IgnoreAttempt: req.IgnoreAttempt, LastError: lastError})
}

// RenewTurn serves provider.Provider.RenewOrchestrationItemLock.
func (e *Engine) RenewTurn(ctx context.Context, req provider.RenewRequest) error {
	const op = "renew orchestration lock"
	if err := checkExtension(op, req); err != nil {
		return err
	}
	return e.driver.RenewTurn(ctx, req)
}

// AbandonWork serves provider.Provider.AbandonWorkItem (Cause is not used).
func (e *Engine) AbandonWork(ctx context.Context, req provider.AbandonRequest) error {
	if err := checkDelay("abandon work item", req); err != nil {
		return err
	}
	return e.driver.AbandonWork(ctx, AbandonParams{LockToken: req.LockToken, Delay: req.Delay, IgnoreAttempt: req.IgnoreAttempt})
}

// RenewWork serves provider.Provider.RenewWorkItemLock.
func (e *Engine) RenewWork(ctx context.Context, req provider.RenewRequest) (provider.ExecutionState, error) {
	if err := checkExtension("renew work item lock", req); err != nil {
		return "", err
	}
	return e.driver.RenewWork(ctx, req)
}

func checkDelay(op string, req provider.AbandonRequest) error {
	if req.Delay < 0 {
		return encode.Invalid(op, "", "delay must not be negative, got %v", req.Delay)
	}
	return nil
}

func checkExtension(op string, req provider.RenewRequest) error {
	if req.ExtendFor <= 0 {
		return encode.Invalid(op, "", "extension must be positive, got %v", req.ExtendFor)
	}
	return nil
}
