package runtime

import (
	"context"

	"github.com/duroxide/duroxide-go/runtime/internal/dispatch"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// Interceptor hooks into the runtime: client calls, orchestration turns,
// activity attempts, and the work each turn schedules. Each Intercept
// method wraps one call: it does its work, calls next (the interceptors
// after it, then the call itself) with the context the call should see, and
// returns what next returned, or an error of its own instead (an activity
// then fails with it; a client call returns it; a turn is handed back and
// retried). Embed InterceptorBase to implement only some of the methods.
//
// Interceptors run outside orchestration code, so they may do anything
// (start spans, read the clock, record metrics). They see only live work:
//   - InterceptTurn wraps each turn as it runs and commits; TurnInfo.Replayed
//     says how much history the turn replays first;
//   - InterceptSchedule sees each new decision that sends work elsewhere
//     (an activity attempt, a child, a detached start, a continue-as-new)
//     before it is recorded, and sets its Headers; replayed decisions are
//     not shown again, their headers are what history recorded;
//   - InterceptActivity wraps each attempt a worker runs, with the headers
//     its decision recorded.
//
// Headers carry context across processes: Client.Start records its
// ClientCall.Headers in the instance's OrchestrationStarted event, and each
// scheduled decision's Headers in its own event and work item, so a worker
// in another process, or a replay after a crash, sees the same values. By
// default a decision's headers are a copy of its execution's start headers.
// The telemetry package's tracing interceptor propagates trace context this
// way.
type Interceptor = dispatch.Interceptor

// InterceptorBase implements every Interceptor method by calling next: embed
// it and override what you need.
type InterceptorBase struct{}

// InterceptClient calls next.
func (InterceptorBase) InterceptClient(ctx context.Context, _ *ClientCall, next func(context.Context) error) error {
	return next(ctx)
}

// InterceptTurn calls next.
func (InterceptorBase) InterceptTurn(ctx context.Context, _ *TurnInfo, next func(context.Context) error) error {
	return next(ctx)
}

// InterceptActivity calls next.
func (InterceptorBase) InterceptActivity(ctx context.Context, _ *ActivityCall, next func(context.Context) error) error {
	return next(ctx)
}

// InterceptSchedule does nothing.
func (InterceptorBase) InterceptSchedule(context.Context, *Scheduled) {}

// ClientCall is a client call an interceptor sees: its Op, the instance, the
// orchestration's or event's name, and a start's Headers.
type ClientCall = dispatch.ClientCall

// ClientOp names a client call.
type ClientOp = dispatch.ClientOp

const (
	ClientStart     = dispatch.ClientStart
	ClientRaise     = dispatch.ClientRaise
	ClientCancel    = dispatch.ClientCancel
	ClientTerminate = dispatch.ClientTerminate
)

// TurnInfo describes an orchestration turn to InterceptTurn.
type TurnInfo = dispatch.TurnInfo

// ActivityCall describes an activity attempt to InterceptActivity.
type ActivityCall = dispatch.ActivityCall

// Scheduled is a new decision shown to InterceptSchedule.
type Scheduled = engine.Scheduled

// ScheduleKind says what a Scheduled decision sends elsewhere.
type ScheduleKind = engine.ScheduleKind

const (
	ScheduleActivity      = engine.ScheduleActivity
	ScheduleChild         = engine.ScheduleChild
	ScheduleDetached      = engine.ScheduleDetached
	ScheduleContinueAsNew = engine.ScheduleContinueAsNew
)

// ErrTurnDeclined is what InterceptTurn's next returns when a fast path ran
// the turn and did not commit it (the instance changed meanwhile, or the
// turn needs what only the usual path does, such as a local activity): the
// turn runs again on the usual path, through the interceptors again.
var ErrTurnDeclined = dispatch.ErrTurnDeclined
