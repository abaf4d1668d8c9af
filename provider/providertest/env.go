package providertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Lock timeouts. Cases that need a lock to hold use longLock; cases that need
// it to lapse use shortLock and then wait pastShortLock, so no case depends on
// how fast the machine is.
const (
	longLock      = 30 * time.Second
	shortLock     = 250 * time.Millisecond
	pastShortLock = 700 * time.Millisecond
	orchName      = "TestOrchestration"
)

// env is one case's store plus helpers that drive it the way the runtime would.
type env struct {
	t   *testing.T
	f   Factory
	p   provider.Provider
	a   provider.Admin
	ctx context.Context
}

func newEnv(t *testing.T, f Factory) *env {
	t.Helper()
	p := f.NewProvider(t)
	return &env{t: t, f: f, p: p, a: p, ctx: t.Context()}
}

func (e *env) must(err error, what string) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// wantErr fails unless err wraps target.
func (e *env) wantErr(err, target error, what string) {
	e.t.Helper()
	if !errors.Is(err, target) {
		e.t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func startItem(instance string) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: instance, Name: orchName, Version: "1.0.0", Input: `"in"`, ExecutionID: 1}
}

func externalItem(instance, name string) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: instance, Name: name, Input: `"data"`}
}

func activityItem(instance string, executionID, id int64) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: instance, ExecutionID: executionID, ID: id, Name: "Act", Input: fmt.Sprintf(`%d`, id)}
}

func completionItem(instance string, executionID, id int64) *provider.WorkItem {
	return &provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: instance, ExecutionID: executionID, ID: id, Result: `"ok"`}
}

func (e *env) enqueue(item provider.WorkItem) {
	e.t.Helper()
	e.must(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: item}), "enqueue "+string(item.Kind))
}

func (e *env) enqueueWork(item provider.WorkItem) {
	e.t.Helper()
	e.must(e.p.EnqueueForWorker(e.ctx, provider.EnqueueRequest{Item: item}), "enqueue work item")
}

// fetch fetches an orchestration item under a long lock and fails if none is ready.
func (e *env) fetch() *provider.OrchestrationItem {
	e.t.Helper()
	return e.fetchLock(longLock)
}

func (e *env) fetchLock(lock time.Duration) *provider.OrchestrationItem {
	e.t.Helper()
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: lock, PollFor: 0})
	e.must(err, "fetch orchestration item")
	if item == nil {
		e.t.Fatal("fetch orchestration item: nothing ready, want an item")
	}
	return item
}

func (e *env) fetchNone() {
	e.t.Helper()
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: 0})
	e.must(err, "fetch orchestration item")
	if item != nil {
		e.t.Fatalf("fetch orchestration item: got %q with %d messages, want nothing ready", item.Instance, len(item.Messages))
	}
}

func (e *env) fetchWork() *provider.WorkItemLease {
	e.t.Helper()
	return e.fetchWorkLock(longLock)
}

func (e *env) fetchWorkLock(lock time.Duration) *provider.WorkItemLease {
	e.t.Helper()
	lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: lock})
	e.must(err, "fetch work item")
	if lease == nil {
		e.t.Fatal("fetch work item: nothing ready, want an item")
	}
	return lease
}

func (e *env) fetchWorkNone() {
	e.t.Helper()
	lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock})
	e.must(err, "fetch work item")
	if lease != nil {
		e.t.Fatalf("fetch work item: got %s %q, want nothing ready", lease.Item.Kind, lease.Item.Instance)
	}
}

// event returns a history event with the next ID after the item's history.
func event(item *provider.OrchestrationItem, offset int64, kind provider.EventKind) provider.Event {
	return provider.Event{ID: int64(len(item.History)) + offset, Kind: kind, Time: time.Now().UnixMilli()}
}

// firstTurn is the ack of an instance's first turn: OrchestrationStarted and
// the metadata that creates the instance row.
func firstTurn(item *provider.OrchestrationItem) provider.OrchestrationAck {
	started := event(item, 1, provider.EventOrchestrationStarted)
	started.Name, started.Version, started.Input = item.OrchestrationName, item.Version, `"in"`
	return provider.OrchestrationAck{
		ExecutionID:  item.ExecutionID,
		HistoryDelta: []provider.Event{started},
		Metadata: provider.ExecutionMetadata{
			OrchestrationName: item.OrchestrationName, OrchestrationVersion: item.Version,
			ParentInstance: item.ParentInstance,
		},
	}
}

func (e *env) ack(item *provider.OrchestrationItem, ack provider.OrchestrationAck) {
	e.t.Helper()
	e.must(AckTurn(e.ctx, e.p, item.LockToken, ack), "ack orchestration item of "+item.Instance)
}

// create starts an instance and acks its first turn: it exists and is Running.
func (e *env) create(instance string) {
	e.t.Helper()
	e.createChild(instance, "")
}

func (e *env) createChild(instance, parent string) {
	e.t.Helper()
	start := startItem(instance)
	start.ParentInstance = parent
	e.enqueue(start)
	item := e.fetchInstance(instance)
	e.ack(item, firstTurn(item))
}

// fetchInstance fetches until it gets the given instance; other instances'
// items it meets are abandoned.
func (e *env) fetchInstance(instance string) *provider.OrchestrationItem {
	e.t.Helper()
	var others []*provider.OrchestrationItem
	defer func() {
		for _, o := range others {
			e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: o.LockToken, IgnoreAttempt: true}), "abandon "+o.Instance)
		}
	}()
	for {
		item := e.fetch()
		if item.Instance == instance {
			return item
		}
		others = append(others, item)
	}
}

// turn delivers an external event to a running instance and acks the turn
// with whatever the caller adds; the history gets the ExternalRaised event.
func (e *env) turn(instance string, fill func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck)) {
	e.t.Helper()
	e.enqueue(externalItem(instance, "tick"))
	item := e.fetchInstance(instance)
	ack := provider.OrchestrationAck{ExecutionID: item.ExecutionID, HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}}
	if fill != nil {
		fill(item, &ack)
	}
	e.ack(item, ack)
}

// finish runs a turn that ends the current execution with status.
func (e *env) finish(instance string, status provider.ExecutionStatus, output string) {
	e.t.Helper()
	e.turn(instance, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.HistoryDelta = append(ack.HistoryDelta, event(item, 2, provider.EventOrchestrationCompleted))
		ack.Metadata.Status, ack.Metadata.Output = status, output
	})
}

// continueAsNew ends the current execution as ContinuedAsNew and acks the
// first turn of the next one.
func (e *env) continueAsNew(instance string) {
	e.t.Helper()
	e.turn(instance, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.HistoryDelta = append(ack.HistoryDelta, event(item, 2, provider.EventOrchestrationContinuedAsNew))
		ack.Metadata.Status, ack.Metadata.Output = provider.StatusContinuedAsNew, `"next"`
		ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkContinueAsNew, Instance: instance, Name: orchName, Input: `"next"`}}
	})
	item := e.fetchInstance(instance)
	next := item.ExecutionID + 1
	e.ack(item, provider.OrchestrationAck{
		ExecutionID:  next,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted, Name: orchName}},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: orchName},
	})
}

// schedule runs a turn that schedules activities with the given IDs and
// returns the execution they belong to.
func (e *env) schedule(instance string, ids ...int64) int64 {
	e.t.Helper()
	var exec int64
	e.turn(instance, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		exec = item.ExecutionID
		for _, id := range ids {
			ack.WorkerItems = append(ack.WorkerItems, activityItem(instance, exec, id))
		}
	})
	return exec
}

func (e *env) info(instance string) provider.InstanceInfo {
	e.t.Helper()
	info, err := e.a.GetInstanceInfo(e.ctx, provider.InstanceRequest{Instance: instance})
	e.must(err, "get instance info of "+instance)
	return info
}

func (e *env) history(instance string) []provider.Event {
	e.t.Helper()
	h, err := e.p.ReadHistory(e.ctx, provider.ExecutionRequest{Instance: instance})
	e.must(err, "read history of "+instance)
	return h
}

func (e *env) depths() provider.QueueDepths {
	e.t.Helper()
	q := e.queueDepths()
	q.OldestOrchestrator, q.OldestWorker = time.Time{}, time.Time{}
	return q
}

// queueDepths is GetQueueDepths with the oldest messages' times.
func (e *env) queueDepths() provider.QueueDepths {
	e.t.Helper()
	q, err := e.a.GetQueueDepths(e.ctx)
	e.must(err, "queue depths")
	return q
}

func (e *env) exists(instance string) bool {
	e.t.Helper()
	_, err := e.a.GetInstanceInfo(e.ctx, provider.InstanceRequest{Instance: instance})
	if errors.Is(err, provider.ErrNotFound) {
		return false
	}
	e.must(err, "get instance info of "+instance)
	return true
}

func (e *env) wantEqual(got, want any, what string) {
	e.t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func eventIDs(events []provider.Event) []int64 {
	ids := make([]int64, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
	}
	return ids
}

func kinds(items []provider.WorkItem) []provider.WorkItemKind {
	out := make([]provider.WorkItemKind, len(items))
	for i, it := range items {
		out[i] = it.Kind
	}
	return out
}
