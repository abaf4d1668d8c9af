package controllers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// Every demo sample, applied as an Orchestration, reaches Completed with its
// expected output; the approval sample gets its decision from spec.events.
func TestSamplesComplete(t *testing.T) {
	p := newPool(t)
	startWorkers(t, p.store, samples.GPUWorkerOptions(workerOptions())) // Render's activity is tagged gpu
	demos := samples.Demos()
	objs := make([]*v1.Orchestration, len(demos))
	for i, d := range demos {
		o := p.orchestration(fmt.Sprintf("sample-%d", i), d.Orchestration, d.Input)
		o.Spec.Events = demoEvents[d.Orchestration]
		create(t, o)
		objs[i] = o
	}
	for i, d := range demos {
		o := waitFor(t, key(objs[i]), "Completed", phaseIs(v1.PhaseCompleted))
		if o.Status.Output != d.Want || o.Status.OutputTruncated {
			t.Errorf("%s: output %q (truncated %v), want %q", d.Name, o.Status.Output, o.Status.OutputTruncated, d.Want)
		}
		if !conditionIs("Succeeded", metav1.ConditionTrue, "Completed")(o) || !conditionIs("Running", metav1.ConditionFalse, "")(o) {
			t.Errorf("%s: conditions %+v", d.Name, o.Status.Conditions)
		}
		if o.Status.InstanceID != p.ns+"/"+objs[i].Name+"/"+string(o.UID) || o.Status.HistoryEvents < 2 ||
			o.Status.StartTime == nil || o.Status.CompletionTime == nil || o.Status.ObservedGeneration != o.Generation {
			t.Errorf("%s: status %s", d.Name, describe(o))
		}
		switch d.Orchestration {
		case "Approval":
			if o.Status.EventsRaised != 1 || !strings.Contains(o.Status.CustomStatus, `"result":"approved"`) {
				t.Errorf("approval: eventsRaised %d customStatus %s", o.Status.EventsRaised, o.Status.CustomStatus)
			}
		case "SubFanOut":
			if len(o.Status.Children) != 3 {
				t.Errorf("sub-orchestration fan-out: children %v, want 3", o.Status.Children)
			}
		case "Counter":
			if o.Status.ExecutionID != 6 {
				t.Errorf("counter: executionID %d, want 6 (continue-as-new 5 times)", o.Status.ExecutionID)
			}
		}
	}
	wantEvent(t, objs[0], "Completed")
}

// demoEvents are the events the demos raise (Demo.Interact), as spec.events.
var demoEvents = map[string][]v1.OrchestrationEvent{
	"Approval": {{Name: "approval", Data: js(samples.Decision{Approved: true, By: "alice"})}},
	"Cart": {
		{Name: "cart", Key: "apple", Data: js(samples.CartEvent{Add: "apple", Price: 3})},
		{Name: "cart", Key: "pear", Data: js(samples.CartEvent{Add: "pear", Price: 4})},
		{Name: "cart", Key: "fig", Data: js(samples.CartEvent{Add: "fig", Price: 2})},
		{Name: "cart", Key: "checkout", Data: js(samples.CartEvent{Checkout: true})},
	},
}

// wantEvent waits for a Kubernetes Event with reason about obj: the
// operator's recorder sends events asynchronously.
func wantEvent(t *testing.T, obj client.Object, reason string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen, err := eventReasons(t, obj)
		if err != nil {
			t.Fatalf("list events: %v", err)
		}
		if slices.Contains(seen, reason) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("no %s event for %s; events: %v", reason, obj.GetName(), seen)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func eventReasons(t *testing.T, obj client.Object) ([]string, error) {
	var list eventsv1.EventList
	if err := k8s.List(t.Context(), &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	var seen []string
	for _, e := range list.Items {
		if e.Regarding.Name == obj.GetName() {
			seen = append(seen, e.Reason)
		}
	}
	return seen, nil
}

// Custom status shows while the instance runs; an event appended to
// spec.events later completes it.
func TestCustomStatusAndLateEvent(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("approval", "Approval", samples.ApprovalRequest{Item: "po-1", Timeout: 10 * 60e9})
	create(t, o)
	got := waitFor(t, key(o), "custom status while running", func(o *v1.Orchestration) bool {
		return o.Status.Phase == v1.PhaseRunning && strings.Contains(o.Status.CustomStatus, `"waitingFor":"approval"`)
	})
	if !conditionIs("Running", metav1.ConditionTrue, "Running")(got) {
		t.Errorf("running conditions %+v", got.Status.Conditions)
	}
	change(t, got, func() {
		got.Spec.Events = append(got.Spec.Events, v1.OrchestrationEvent{Name: "approval", Data: js(samples.Decision{Approved: false, By: "bob"})})
	})
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	if done.Status.Output != `"po-1: rejected by bob"` || !strings.Contains(done.Status.CustomStatus, `"result":"rejected"`) {
		t.Errorf("output %s custom status %s", done.Status.Output, done.Status.CustomStatus)
	}
	wantEvent(t, o, "EventRaised")
}

// Each entry of spec.events reaches the instance once, in order, even when
// the operator raises them again (its record of raised events lost, as after
// a failed status write): the history holds one ExternalRaised per name.
func TestEventsReachTheInstanceOnce(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("tally", "Tally", []string{"a", "b", "c", "d"})
	o.Spec.Events = []v1.OrchestrationEvent{{Name: "a", Data: js("1")}, {Name: "b", Data: js("2")}, {Name: "c", Data: js("3")}}
	create(t, o)
	got := waitFor(t, key(o), "three events received", func(o *v1.Orchestration) bool {
		return o.Status.EventsRaised == 3 && strings.Contains(o.Status.CustomStatus, `"received":3`)
	})
	// Forget: the next reconcile raises a, b and c again.
	changeStatus(t, got, func() { got.Status.EventsRaised, got.Status.RaisedEvents = 0, nil })
	change(t, got, func() { got.Spec.Events = append(got.Spec.Events, v1.OrchestrationEvent{Name: "d", Data: js("4")}) })
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	if done.Status.Output != `["1","2","3","4"]` || done.Status.EventsRaised != 4 {
		t.Fatalf("output %s eventsRaised %d", done.Status.Output, done.Status.EventsRaised)
	}
	hist, err := p.client.History(t.Context(), done.Status.InstanceID)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	var raised []string
	for _, e := range hist {
		if e.Kind == provider.EventExternalRaised {
			raised = append(raised, e.Name)
		}
	}
	if strings.Join(raised, ",") != "a,b,c,d" {
		t.Fatalf("ExternalRaised events in history: %v, want a,b,c,d once each", raised)
	}
}

// spec.terminate terminates a running instance; the CR says why.
func TestTerminate(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("wait", "Approval", samples.ApprovalRequest{Item: "x", Timeout: 10 * 60e9})
	create(t, o)
	got := waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
	change(t, got, func() { got.Spec.Terminate = "no longer needed" })
	done := waitFor(t, key(o), "Terminated", phaseIs(v1.PhaseTerminated))
	if done.Status.Failure == nil || !strings.Contains(done.Status.Failure.Message, "no longer needed") {
		t.Errorf("failure %+v", done.Status.Failure)
	}
	if !conditionIs("Failed", metav1.ConditionTrue, "Terminated")(done) || conditionIs("Terminating", metav1.ConditionTrue, "")(done) {
		t.Errorf("conditions %+v", done.Status.Conditions)
	}
	if msg := conditionMessage(done, "Failed"); msg != "terminated: no longer needed" {
		t.Errorf("Failed condition message %q, want %q (the prefix once)", msg, "terminated: no longer needed")
	}
	wantEvent(t, o, "Terminated")
}

// Deleting an Orchestration applies its deletion policy to the instance.
func TestDeletionPolicies(t *testing.T) {
	p := newPool(t)
	cases := []struct {
		policy v1.DeletionPolicy
		check  func(t *testing.T, id string)
	}{
		{v1.DeletionTerminate, func(t *testing.T, id string) {
			st, err := p.client.Wait(timeout(t, time.Minute), id)
			if err != nil || st.Status != runtime.StatusTerminated {
				t.Errorf("instance after delete: %+v, %v; want Terminated", st, err)
			}
		}},
		{v1.DeletionPurge, func(t *testing.T, id string) {
			if _, err := p.client.Status(t.Context(), id); !errors.Is(err, provider.ErrNotFound) {
				t.Errorf("instance after purge: %v, want not found", err)
			}
		}},
		{v1.DeletionOrphan, func(t *testing.T, id string) {
			st, err := p.client.Status(t.Context(), id)
			if err != nil || st.Status != runtime.StatusRunning {
				t.Errorf("orphaned instance: %+v, %v; want still Running", st, err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(string(c.policy), func(t *testing.T) {
			o := p.orchestration("del-"+strings.ToLower(string(c.policy)), "Approval", samples.ApprovalRequest{Item: "x", Timeout: 10 * 60e9})
			o.Spec.DeletionPolicy = c.policy
			create(t, o)
			got := waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
			if err := k8s.Delete(t.Context(), got); err != nil {
				t.Fatalf("delete: %v", err)
			}
			waitGone(t, got)
			c.check(t, got.Status.InstanceID)
		})
	}
}

// ttlSecondsAfterFinished deletes a finished Orchestration.
func TestTTLDeletesFinished(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("short-lived", "Hello", "TTL")
	o.Spec.TTLSecondsAfterFinished = ptr.To[int32](2)
	create(t, o)
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	if done.Status.Output != `"Hello, TTL!"` {
		t.Fatalf("output %s", done.Status.Output)
	}
	waitGone(t, o)
	// Its deletion policy (Terminate) keeps the finished instance's history.
	if st, err := p.client.Status(t.Context(), done.Status.InstanceID); err != nil || st.Status != runtime.StatusCompleted {
		t.Fatalf("instance after TTL: %+v, %v", st, err)
	}
}

// An instance whose output and custom status are large and whose history
// has 10,000 events leaves a small CR: output cut and flagged.
func TestLargeInstanceSmallCR(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("big", "Timers", TimersInput{Count: 5000, OutputBytes: 100_000})
	create(t, o)
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	if done.Status.HistoryEvents < 10_000 {
		t.Fatalf("historyEvents %d, want >= 10000", done.Status.HistoryEvents)
	}
	if !done.Status.OutputTruncated || len(done.Status.Output) != 4096 || len(done.Status.CustomStatus) > 1024 {
		t.Errorf("output %d bytes (truncated %v), custom status %d bytes", len(done.Status.Output), done.Status.OutputTruncated, len(done.Status.CustomStatus))
	}
	raw, err := json.Marshal(done)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CR of an instance with %d history events and 100 kB output: %d bytes", done.Status.HistoryEvents, len(raw))
	if len(raw) >= 16*1024 {
		t.Fatalf("CR is %d bytes, want < 16 KiB", len(raw))
	}
}

// spec.input edited after the start is reported, not silently ignored.
func TestInputChangeIsReported(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("edit", "Approval", samples.ApprovalRequest{Item: "first", Timeout: 10 * 60e9})
	create(t, o)
	got := waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
	change(t, got, func() { got.Spec.Input = js(samples.ApprovalRequest{Item: "second", Timeout: 10 * 60e9}) })
	waitFor(t, key(o), "InputChanged", conditionIs("InputChanged", metav1.ConditionTrue, "InputImmutable"))
	if !strings.Contains(got.Status.CustomStatus, `"item":"first"`) {
		t.Errorf("custom status %s: the instance should keep its input", got.Status.CustomStatus)
	}
}

// timeout is the test's context, ended after d.
func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
