package storeengine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func TestLockRequests(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func(*Engine) error
		want string // the driver operation, or the error the request gets
	}{
		{"abandon turn", func(e *Engine) error {
			return e.AbandonTurn(ctx, provider.AbandonRequest{LockToken: "t", Delay: time.Second})
		}, "AbandonTurn"},
		{"abandon turn, no token", func(e *Engine) error { return e.AbandonTurn(ctx, provider.AbandonRequest{}) }, "lock"},
		{"abandon turn, negative delay", func(e *Engine) error {
			return e.AbandonTurn(ctx, provider.AbandonRequest{LockToken: "t", Delay: -1})
		}, "invalid"},
		{"renew turn", func(e *Engine) error {
			return e.RenewTurn(ctx, provider.RenewRequest{LockToken: "t", ExtendFor: time.Second})
		}, "RenewTurn"},
		{"renew turn by nothing", func(e *Engine) error { return e.RenewTurn(ctx, provider.RenewRequest{LockToken: "t"}) }, "invalid"},
		{"abandon work", func(e *Engine) error { return e.AbandonWork(ctx, provider.AbandonRequest{LockToken: "w"}) }, "AbandonWork"},
		{"abandon work, negative delay", func(e *Engine) error {
			return e.AbandonWork(ctx, provider.AbandonRequest{LockToken: "w", Delay: -time.Second})
		}, "invalid"},
		{"renew work", func(e *Engine) error {
			_, err := e.RenewWork(ctx, provider.RenewRequest{LockToken: "w", ExtendFor: time.Second})
			return err
		}, "RenewWork"},
		{"renew work backwards", func(e *Engine) error {
			_, err := e.RenewWork(ctx, provider.RenewRequest{LockToken: "w", ExtendFor: -time.Second})
			return err
		}, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			err := tc.call(New(r, Config{}))
			switch tc.want {
			case "invalid", "lock":
				want := map[string]error{"invalid": provider.ErrInvalidArgument, "lock": provider.ErrLockNotHeld}[tc.want]
				if !errors.Is(err, want) || r.took != "" {
					t.Fatalf("got %v, took %q; want %v and no driver call", err, r.took, want)
				}
			default:
				if err != nil || r.took != tc.want {
					t.Fatalf("took %q (%v), want %q", r.took, err, tc.want)
				}
			}
		})
	}
}
