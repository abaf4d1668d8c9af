package runtime

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

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
func Replay(reg *Registry, history []provider.Event) error {
	if len(history) == 0 {
		return fmt.Errorf("replay: the history is empty")
	}
	started := history[0]
	if started.Kind != provider.EventOrchestrationStarted {
		return fmt.Errorf("replay: history starts with %s, not OrchestrationStarted", started.Kind)
	}
	history, imposedEnd := withoutImposedEnd(history)
	in := turnInput{executionID: max(started.ExecutionID, 1), history: history,
		now: time.UnixMilli(history[len(history)-1].Time), stepTimeout: Options{}.withDefaults().StepTimeout}
	t := newTurn(reg, in, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer t.sched.teardown()
	if err := t.replay(history); err != nil {
		return err
	}
	if t.mainDone() && !t.finished && !imposedEnd {
		return t.nondeterminism(t.nextID, "the orchestration waiting (the history ends here)", "the orchestration returned")
	}
	return nil
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
