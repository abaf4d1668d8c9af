package dispatch

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// Interceptor hooks into the runtime's calls; runtime.Interceptor documents
// it. Each Intercept method wraps one call: it calls next (the interceptors
// after it, then the call) and returns what next returned, or an error of
// its own instead.
type Interceptor interface {
	InterceptClient(ctx context.Context, call *ClientCall, next func(context.Context) error) error
	InterceptTurn(ctx context.Context, turn *TurnInfo, next func(context.Context) error) error
	InterceptActivity(ctx context.Context, call *ActivityCall, next func(context.Context) error) error
	InterceptSchedule(ctx context.Context, s *engine.Scheduled)
}

// ClientOp names a client call an interceptor sees.
type ClientOp string

const (
	ClientStart     ClientOp = "start"
	ClientRaise     ClientOp = "raise"
	ClientCancel    ClientOp = "cancel"
	ClientTerminate ClientOp = "terminate"
)

// ClientCall is a client call: start, raise, cancel or terminate.
type ClientCall struct {
	Op       ClientOp
	Instance string
	// Name is the orchestration's (start) or the event's (raise) name.
	Name string
	// Headers, on a start, are recorded with the instance's start and seen
	// by its turns and, unless an interceptor changes them, by the work it
	// schedules. An interceptor may set them before it calls next.
	Headers map[string]string
}

// TurnInfo is one orchestration turn.
type TurnInfo struct {
	Instance      string
	ExecutionID   int64
	Orchestration string
	Version       string
	// Headers are the execution's start headers as recorded (read only).
	Headers map[string]string
	// Replayed is how many history events the turn replays before its code
	// runs on: 0 for an execution's first turn.
	Replayed int
	// Attempt counts the deliveries of the turn's messages (1 the first time).
	Attempt int
	// Status is, once next returned nil, the execution's status the turn
	// committed: Running, Completed, Failed, ContinuedAsNew or Terminated.
	Status provider.ExecutionStatus
}

// ActivityCall is one attempt of an activity.
type ActivityCall struct {
	Instance    string
	ExecutionID int64
	ActivityID  int64
	Name        string
	// Attempt counts deliveries of this attempt's work item (1 the first
	// time; more after a crash or a lost lease).
	Attempt int
	// Local: it runs inside its orchestration's turn (WithLocal).
	Local bool
	// Headers are those recorded when the attempt was scheduled (read only).
	Headers map[string]string
}

// interceptors is a chain: the first is outermost.
type interceptors []Interceptor

func (is interceptors) client(ctx context.Context, call *ClientCall, fn func(context.Context) error) error {
	if len(is) == 0 {
		return fn(ctx)
	}
	return is[0].InterceptClient(ctx, call, func(ctx context.Context) error { return is[1:].client(ctx, call, fn) })
}

func (is interceptors) turn(ctx context.Context, info *TurnInfo, fn func(context.Context) error) error {
	if len(is) == 0 {
		return fn(ctx)
	}
	return is[0].InterceptTurn(ctx, info, func(ctx context.Context) error { return is[1:].turn(ctx, info, fn) })
}

func (is interceptors) activity(ctx context.Context, call *ActivityCall, fn func(context.Context) error) error {
	if len(is) == 0 {
		return fn(ctx)
	}
	return is[0].InterceptActivity(ctx, call, func(ctx context.Context) error { return is[1:].activity(ctx, call, fn) })
}

func (is interceptors) schedule(ctx context.Context, s *engine.Scheduled) {
	for _, i := range is {
		i.InterceptSchedule(ctx, s)
	}
}

// InterceptClient runs a client call through the interceptors (a Client's
// own, which Runtime.Client takes from its runtime).
func InterceptClient(chain []Interceptor, ctx context.Context, call *ClientCall, fn func(context.Context) error) error {
	return interceptors(chain).client(ctx, call, fn)
}
