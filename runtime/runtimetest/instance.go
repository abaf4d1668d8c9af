package runtimetest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// Instance is a handle on one orchestration instance of an Env.
type Instance struct {
	env *Env
	id  string
}

// ID is the instance ID.
func (i *Instance) ID() string { return i.id }

// Run runs the world until this instance finishes (Completed, Failed or
// Terminated: check Status). It fails when the instance can make no more
// progress, for example because it waits for an event nobody raises, or when
// a turn cannot run (nondeterminism, an unregistered orchestration).
func (i *Instance) Run() error {
	return i.RunUntil(func() bool { return i.Status().Finished() })
}

// RunUntil runs the world until cond holds, checking it before each step. It
// fails when cond cannot come true any more: the instance finished, or
// nothing is left to do. Use it to stop at a point of the run, for example
// once the custom status shows a stage, and raise an event there.
func (i *Instance) RunUntil(cond func() bool) error {
	for !cond() {
		if i.env.err == nil && i.Status().Finished() {
			return fmt.Errorf("runtimetest: instance %q finished (%s) before the condition held", i.id, i.Status().Status)
		}
		progressed, err := i.env.Step()
		if err != nil {
			return err
		}
		if !progressed {
			return fmt.Errorf("runtimetest: instance %q is %s and nothing is left to do: %s", i.id, i.Status().Status, i.waitingFor())
		}
	}
	return nil
}

// RunFor runs the world until the virtual clock has moved d, or nothing is
// left to do before then.
func (i *Instance) RunFor(d time.Duration) error {
	deadline := i.env.now.Add(d)
	reached := false
	i.env.After(d, func() { reached = true })
	for !reached {
		progressed, err := i.env.Step()
		if err != nil {
			return err
		}
		if !progressed {
			break
		}
	}
	if i.env.now.Before(deadline) {
		i.env.now = deadline
	}
	return nil
}

// RaiseEvent queues an external event for the instance, as Client.RaiseEvent
// does. Unlike the client it does not check that the instance can receive
// it: a test may raise before the instance has run.
func (i *Instance) RaiseEvent(name string, data any) {
	payload, err := engine.EncodePayload(data)
	if err != nil {
		i.env.fatalf("runtimetest: raise %q on %q: %v", name, i.id, err)
	}
	i.env.enqueue(provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: i.id, Name: name, Input: payload})
}

// Terminate queues a termination, as Client.Terminate does.
func (i *Instance) Terminate(reason string) {
	i.env.enqueue(provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: i.id, Reason: reason})
}

// Cancel queues a graceful cancellation, as Client.Cancel does.
func (i *Instance) Cancel(reason string) {
	i.env.enqueue(provider.WorkItem{Kind: provider.WorkCancelRequested, Instance: i.id, Reason: reason})
}

// Status is the instance's state, as Client.Status would report it from a
// store: decode its output with DecodeOutput, its custom status with
// DecodeCustomStatus; Failure says why it failed.
func (i *Instance) Status() *runtime.Status {
	inst := i.env.instances[i.id]
	if inst == nil || !inst.exists {
		return &runtime.Status{Instance: i.id, Status: runtime.StatusPending}
	}
	info := provider.InstanceInfo{Instance: i.id, OrchestrationName: inst.name, Version: inst.version,
		CurrentExecutionID: inst.execution, Status: inst.status, Output: inst.output, CustomStatus: inst.custom,
		CustomStatusVersion: inst.customVersion, ParentInstance: inst.parent,
		CreatedAt: time.UnixMilli(inst.created), UpdatedAt: time.UnixMilli(inst.updated)}
	return engine.StatusFromInfo(info)
}

// History is the current execution's history.
func (i *Instance) History() []provider.Event {
	if inst := i.env.instances[i.id]; inst != nil {
		return slices.Clone(inst.history)
	}
	return nil
}

// waitingFor describes what an idle running instance waits for.
func (i *Instance) waitingFor() string {
	if !i.Status().Finished() && i.env.instances[i.id] == nil {
		return "it was never started"
	}
	raised := map[string]int{}
	var waits []string
	for _, ev := range i.History() {
		switch ev.Kind {
		case provider.EventExternalRaised:
			raised[ev.Name]++
		case provider.EventExternalSubscribed:
			if raised[ev.Name] > 0 {
				raised[ev.Name]--
				continue
			}
			waits = append(waits, fmt.Sprintf("%q", ev.Name))
		}
	}
	if len(waits) == 0 {
		return "no activity, timer or event is pending"
	}
	return "it waits for event " + strings.Join(waits, ", ") + " and nobody raises it (RaiseEvent, or Env.After to raise it later)"
}
