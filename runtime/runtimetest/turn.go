package runtimetest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// instance is what a store keeps of one instance.
type instance struct {
	exists        bool
	name, version string
	parent        string
	execution     int64
	status        provider.ExecutionStatus
	output        string
	history       []provider.Event
	custom        *string
	customVersion int64
	created       int64
	updated       int64
}

// runTurn takes the messages of the instance first in line and runs its turn.
func (e *Env) runTurn() error {
	id := e.ready[0].Instance
	var msgs []provider.WorkItem
	e.ready = slices.DeleteFunc(e.ready, func(m provider.WorkItem) bool {
		if m.Instance == id {
			msgs = append(msgs, m)
			return true
		}
		return false
	})
	inst := e.instances[id]
	if inst == nil {
		inst = &instance{}
		e.instances[id] = inst
	}
	item := &provider.OrchestrationItem{Instance: id, Exists: inst.exists, ExecutionID: max(inst.execution, 1),
		Status: inst.status, History: slices.Clone(inst.history), Messages: msgs, CustomStatus: inst.custom,
		OrchestrationName: inst.name, Version: inst.version}
	in, v := engine.PrepareTurn(item, e.now)
	if v != engine.RunIt {
		// Nothing to run: only the replies the store must still send.
		e.enqueueAll(in.Replies)
		return nil
	}
	in.StepTimeout = engine.DefaultStepTimeout
	in.Local = &engine.LocalRunner{
		Has: func(string, string) bool { return true },
		// One at a time: the test environment is single-threaded.
		Run: func(w provider.WorkItem, _ time.Duration) (provider.WorkItem, error) {
			e.localMu.Lock()
			defer e.localMu.Unlock()
			return e.execute(w), nil
		},
	}
	ack, _, err := engine.RunTurn(e.reg, in, e.logger)
	if err != nil {
		return fmt.Errorf("runtimetest: turn of instance %q: %w", id, err)
	}
	e.commit(id, inst, ack)
	e.enqueueAll(ack.OrchestratorItems)
	return nil
}

func (e *Env) enqueueAll(items []provider.WorkItem) {
	for _, m := range items {
		e.enqueue(m)
	}
}

// commit applies an ack as a provider would.
func (e *Env) commit(id string, inst *instance, ack provider.OrchestrationAck) {
	if !inst.exists {
		inst.exists, inst.created = true, e.now.UnixMilli()
		inst.name, inst.parent = ack.Metadata.OrchestrationName, ack.Metadata.ParentInstance
	}
	if ack.ExecutionID != inst.execution {
		inst.execution, inst.history, inst.status = ack.ExecutionID, nil, provider.StatusRunning
	}
	if v := ack.Metadata.OrchestrationVersion; v != "" {
		inst.version = v
	}
	inst.history = append(inst.history, ack.HistoryDelta...)
	if ack.Metadata.Status != "" {
		inst.status, inst.output = ack.Metadata.Status, ack.Metadata.Output
	}
	if cs := ack.Metadata.CustomStatus; cs != nil {
		inst.customVersion++
		if cs.Clear {
			inst.custom = nil
		} else {
			v := cs.Value
			inst.custom = &v
		}
	}
	inst.updated = e.now.UnixMilli()
	e.activities = append(e.activities, ack.WorkerItems...)
	for _, c := range ack.CancelledActivities {
		e.activities = slices.DeleteFunc(e.activities, func(w provider.WorkItem) bool {
			return w.Instance == c.Instance && w.ExecutionID == c.ExecutionID && w.ID == c.ActivityID
		})
	}
	for _, c := range ack.CancelledTimers {
		e.delayed = slices.DeleteFunc(e.delayed, func(d delayedItem) bool {
			return d.item.Instance == id && d.item.Kind == provider.WorkTimerFired &&
				d.item.ExecutionID == c.ExecutionID && d.item.ID == c.TimerID
		})
	}
}

// runActivity runs the first queued activity, the override if there is one,
// and queues its completion for the orchestration.
func (e *Env) runActivity() {
	item := e.activities[0]
	e.activities = e.activities[1:]
	e.enqueue(e.execute(item))
}

// execute runs an activity, the override if there is one, and returns its
// completion. WithLocal activities run here too, inside their turn.
func (e *Env) execute(item provider.WorkItem) provider.WorkItem {
	e.calls[item.Name]++
	reg := e.reg
	if o := e.overrides[item.Name]; o != nil {
		reg = o
	}
	fn, err := engine.LookupActivity(reg, item.Name)
	if err != nil {
		return *engine.ActivityFailed(item, engine.DetailsOf(err))
	}
	info := runtime.ActivityInfo{Instance: item.Instance, ExecutionID: item.ExecutionID, ActivityID: item.ID, Name: item.Name, Attempt: 1}
	out, err := engine.CallActivity(engine.WithActivityInfo(context.Background(), info), fn, item)
	if err != nil {
		return *engine.ActivityFailed(item, engine.DetailsOf(err))
	}
	return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID, Result: out}
}
