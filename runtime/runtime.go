package runtime

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/dispatch"
)

// Runtime hosts the orchestration and activity dispatchers of one process.
// Any number of runtimes, in any number of processes, may share a store.
type Runtime struct {
	p            provider.Provider
	d            *dispatch.Dispatcher
	interceptors []Interceptor
}

// New returns a runtime for the registry's code on provider p.
func New(p provider.Provider, reg *Registry, opts Options) *Runtime {
	return &Runtime{p: p, d: dispatch.New(p, reg, dispatch.Options(opts.withDefaults())), interceptors: opts.Interceptors}
}

// Start launches the dispatchers. They run until Shutdown or until ctx ends.
func (r *Runtime) Start(ctx context.Context) error { return r.d.Start(ctx) }

// Shutdown stops fetching work and waits for in-flight turns and activities.
// Activities still running after DrainTimeout (or when ctx ends) are
// cancelled and their items handed back at once, without counting an attempt,
// so another worker picks them up.
func (r *Runtime) Shutdown(ctx context.Context) error { return r.d.Shutdown(ctx) }

// Client returns a client on the runtime's store whose Start runs the new
// instance's first turn in this runtime when it can: this runtime has the
// orchestration's code and, for an eager start, a turn slot is free (a
// direct start runs in the caller's goroutine).
//
// Start computes the turn before it returns and commits the instance, its
// history and what the turn sends in one commit (direct start:
// provider.TurnNew). A first turn that runs local activities is started
// eagerly instead, so Start never waits for user activities: Start queues
// the start and locks the instance in one commit
// (provider.StartRequest.LockFor), and the turn runs at once in a turn slot
// (eager start).
// Either way no fetch is needed and no other dispatcher is woken. A direct
// start commits only for an ID nothing holds; an eager start checks the ID
// as a NewClient's Start does (refused, a retry, or replaced under the
// ID-reuse policy). Starts with StartWithEvent, and starts that find no
// slot, are queued as a NewClient's are. The client works after Shutdown
// too, queuing plainly. Its calls go through the runtime's interceptors.
func (r *Runtime) Client() *Client {
	c := NewClient(r.p, ClientInterceptors(r.interceptors...))
	c.eager = r.d
	return c
}
