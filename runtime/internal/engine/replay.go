package engine

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// ErrReplayNeedsInstance means a history did not replay and the code read
// the instance ID, which the replay was not given: the mismatch may come
// from the empty ID the code saw in its place. Replay again with
// ReplayInstance.
var ErrReplayNeedsInstance = errors.New("replay: the code reads the instance ID " +
	"(ctx.InstanceID, ctx.NewGUID or a sub-orchestration's default ID) and the replay was not given it")

// ReplayOption gives Replay what a history does not record.
type ReplayOption func(*replayConfig)

type replayConfig struct {
	instance string
}

// ReplayInstance names the instance the history belongs to. The code sees
// it as ctx.InstanceID, and ctx.NewGUID and the default IDs of
// sub-orchestrations derive from it, so code using any of them replays
// faithfully only with it. The execution ID is in the history.
func ReplayInstance(id string) ReplayOption {
	return func(c *replayConfig) { c.instance = id }
}

// Replay runs reg's code against the recorded history of one execution, as
// a worker would on its next turn, and returns the first place where the
// code no longer makes the recorded decisions: a *NondeterminismError naming
// the event, what the history records and what the code did. Nil means the
// code is compatible with the history. Nothing is executed: activities,
// timers and sub-orchestrations are answered from the history.
//
// Check a new build against histories recorded by the old one (from the
// store, or from `duroxide history -o json`) before rolling it out: a
// mismatch would leave those instances stuck until the old code returns.
// Pass the instance with ReplayInstance: without it, a mismatch after the
// code read the instance ID is reported as ErrReplayNeedsInstance.
func Replay(reg *Registry, history []provider.Event, opts ...ReplayOption) error {
	var cfg replayConfig
	for _, o := range opts {
		o(&cfg)
	}
	if len(history) == 0 {
		return errors.New("replay: the history is empty")
	}
	started := history[0]
	if started.Kind != provider.EventOrchestrationStarted {
		return fmt.Errorf("replay: history starts with %s, not OrchestrationStarted", started.Kind)
	}
	history, imposedEnd := withoutImposedEnd(history)
	in := TurnInput{instance: cfg.instance, executionID: max(started.ExecutionID, 1), history: history,
		now: time.UnixMilli(history[len(history)-1].Time), StepTimeout: DefaultStepTimeout}
	t := newTurn(reg, in, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer t.sched.teardown()
	t.endImposed = imposedEnd
	err := t.replay(history)
	if err == nil && t.mainDone() && !t.finished && !imposedEnd {
		err = t.nondeterminism(t.nextID, "the orchestration waiting (the history ends here)", "the orchestration returned")
	}
	return blameMissingInstance(t, err)
}

// blameMissingInstance reports a mismatch as ErrReplayNeedsInstance when the
// code read the instance ID the replay did not have: the code decided on an
// empty ID, so the mismatch may be the replay's rather than the code's.
func blameMissingInstance(t *turn, err error) error {
	var nd *NondeterminismError
	if t.instance != "" || !t.instanceRead || !errors.As(err, &nd) {
		return err
	}
	return fmt.Errorf("%w; without it: %v", ErrReplayNeedsInstance, nd)
}

// withoutImposedEnd drops a final event the runtime recorded without the code
// returning (a termination, or a failure the engine imposed such as a poison
// turn or a limit): replaying code cannot produce it.
func withoutImposedEnd(history []provider.Event) ([]provider.Event, bool) {
	last := history[len(history)-1]
	imposed := last.Kind == provider.EventOrchestrationTerminated
	if last.Kind == provider.EventOrchestrationFailed && last.Error != nil {
		switch last.Error.Kind {
		case FailurePoison, FailurePanicked, FailureNondeterminism, FailureLimit, FailureBlocked,
			FailureUnregistered, FailureForeignGoroutine:
			imposed = true
		}
	}
	if imposed && len(history) > 1 {
		return history[:len(history)-1], true
	}
	return history, imposed
}
