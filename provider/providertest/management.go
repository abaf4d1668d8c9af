package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func managementCases() []Case {
	return []Case{
		{Name: "ListInstancesOnEmptyStore", Run: listInstancesEmpty},
		{Name: "ListInstancesReturnsAll", Run: listInstancesAll},
		{Name: "ListInstancesByStatus", Run: listInstancesByStatus},
		{Name: "ListExecutions", Run: listExecutions},
		{Name: "InstanceInfo", Run: instanceInfo},
		{Name: "InstanceInfoOfUnknownInstance", Run: instanceInfoUnknown},
		{Name: "AbandonCauseIsLastErrorUntilAck", Run: abandonCauseIsLastError},
		{Name: "ExecutionInfo", Run: executionInfo},
		{Name: "ExecutionInfoOfUnknownExecution", Run: executionInfoUnknown},
		{Name: "SystemMetrics", Run: systemMetrics},
		{Name: "SystemMetricsFollowEveryPath", Run: systemMetricsFollowEveryPath},
		{Name: "QueueDepths", Run: queueDepths},
		{Name: "BacklogByName", Run: backlogByName},
	}
}

func listInstancesEmpty(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.wantEqual(len(e.listIDs(provider.ListRequest{})), 0, "instances in an empty store")
}

func listInstancesAll(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
	}
	ids := e.listIDs(provider.ListRequest{})
	e.wantEqual(len(ids), 3, "instances")
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	e.wantEqual(seen["a"] && seen["b"] && seen["c"], true, "all three listed")
}

func listInstancesByStatus(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"run", "ok", "bad"} {
		e.create(id)
	}
	e.finish("ok", provider.StatusCompleted, `1`)
	e.finish("bad", provider.StatusFailed, `"boom"`)
	for status, want := range map[provider.ExecutionStatus][]string{
		provider.StatusRunning: {"run"}, provider.StatusCompleted: {"ok"}, provider.StatusFailed: {"bad"},
		provider.StatusTerminated: nil,
	} {
		e.wantEqual(e.listIDs(provider.ListRequest{Status: status}), want, "instances "+string(status))
	}
}

func listExecutions(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	ids, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "a"})
	e.must(err, "list executions")
	e.wantEqual(ids, []int64{1, 2}, "executions")
	none, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "unknown"})
	e.must(err, "list executions of unknown instance")
	e.wantEqual(len(none), 0, "executions of unknown instance")
}

func instanceInfo(t *testing.T, f Factory) {
	e := newEnv(t, f)
	before := time.Now().Add(-time.Second)
	e.create("a")
	e.createChild("c", "a")
	e.finish("a", provider.StatusCompleted, `"result"`)
	info := e.info("a")
	e.wantEqual([]any{info.OrchestrationName, info.Version, info.Status, info.Output, info.CurrentExecutionID, info.ParentInstance},
		[]any{orchName, "1.0.0", provider.StatusCompleted, `"result"`, 1, ""}, "instance info")
	if info.CreatedAt.Before(before) || info.UpdatedAt.Before(info.CreatedAt) {
		t.Fatalf("times: created %v updated %v, want created after %v and updated not before created", info.CreatedAt, info.UpdatedAt, before)
	}
	e.wantEqual(e.info("c").ParentInstance, "a", "child's parent")
}

func instanceInfoUnknown(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.a.GetInstanceInfo(e.ctx, provider.InstanceRequest{Instance: "unknown"})
	e.wantErr(err, provider.ErrNotFound, "info of unknown instance")
}

func executionInfo(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	running, err := e.a.GetExecutionInfo(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: 1})
	e.must(err, "execution info")
	e.wantEqual([]any{running.Status, running.CompletedAt.IsZero(), running.EventCount}, []any{provider.StatusRunning, true, 1}, "running execution")
	e.finish("a", provider.StatusFailed, `"boom"`)
	done, err := e.a.GetExecutionInfo(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: 1})
	e.must(err, "execution info")
	e.wantEqual([]any{done.Status, done.Output, done.CompletedAt.IsZero(), done.EventCount}, []any{provider.StatusFailed, `"boom"`, false, 3}, "failed execution")
}

func executionInfoUnknown(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	_, err := e.a.GetExecutionInfo(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: 9})
	e.wantErr(err, provider.ErrNotFound, "info of unknown execution")
}

func systemMetrics(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"r1", "r2", "ok", "bad", "term"} {
		e.create(id)
	}
	e.finish("ok", provider.StatusCompleted, `1`)
	e.finish("bad", provider.StatusFailed, `"x"`)
	e.finish("term", provider.StatusTerminated, `"stop"`)
	e.continueAsNew("r1")
	m, err := e.a.GetSystemMetrics(e.ctx)
	e.must(err, "system metrics")
	// r1: 3 + 1 events; r2: 1; ok, bad, term: 3 each.
	e.wantEqual(m, provider.SystemMetrics{TotalInstances: 5, Running: 2, Completed: 1, Failed: 1, Terminated: 1,
		TotalExecutions: 6, TotalEvents: 14}, "metrics")

	// A queued start is Pending (not yet an instance); a running instance
	// whose turn was handed back with a cause is Stalled (still Running).
	e.enqueue(startItem("later"))
	e.enqueue(externalItem("r2", "x"))
	item := e.fetchInstance("r2")
	cause := &provider.ErrorDetails{Class: provider.ErrorConfiguration, Message: "not registered"}
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: time.Hour, IgnoreAttempt: true, Cause: cause}), "abandon r2")
	m, err = e.a.GetSystemMetrics(e.ctx)
	e.must(err, "system metrics")
	e.wantEqual([]int64{m.TotalInstances, m.Running, m.Stalled, m.Pending}, []int64{5, 2, 1, 1}, "instances, running, stalled, pending")
}

// systemMetricsFollowEveryPath checks the instance counts after each way an
// instance's status changes: a store that keeps them as counters (rather
// than counting at each read) must move them on every path.
func systemMetricsFollowEveryPath(t *testing.T, f Factory) {
	e := newEnv(t, f)
	counts := func(what string, running, completed, failed, terminated int64) {
		e.t.Helper()
		m, err := e.a.GetSystemMetrics(e.ctx)
		e.must(err, "system metrics")
		e.wantEqual([]int64{m.TotalInstances, m.Running, m.Completed, m.Failed, m.Terminated},
			[]int64{running + completed + failed + terminated, running, completed, failed, terminated}, what)
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		e.create(id)
	}
	counts("four started", 4, 0, 0, 0)
	e.continueAsNew("a")
	e.continueAsNew("a")
	counts("a continued as new twice", 4, 0, 0, 0)
	e.finish("a", provider.StatusCompleted, `1`)
	e.finish("b", provider.StatusFailed, `"x"`)
	e.finish("c", provider.StatusTerminated, `"stop"`)
	counts("a, b, c finished", 1, 1, 1, 1)
	_, err := e.a.PruneExecutions(e.ctx, provider.PruneRequest{Instance: "a", Options: provider.PruneOptions{KeepLast: 1}})
	e.must(err, "prune a")
	counts("a pruned", 1, 1, 1, 1)
	e.must(e.a.QueueRewind(e.ctx, provider.RewindRequest{Item: rewindItem("b", 1)}), "rewind b")
	counts("b rewound", 2, 1, 0, 1)
	_, err = e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"b", "d"}, Force: true})
	e.must(err, "delete b and d")
	counts("b and d deleted", 0, 1, 0, 1)
	_, err = e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}})
	e.must(err, "delete a")
	counts("a deleted", 0, 0, 0, 1)
	e.must(e.start(startItem("c"), provider.IDReuseAllowFinished), "replace c")
	counts("c replaced by a queued start", 0, 0, 0, 0)
	e.create("e")
	counts("e started", 1, 0, 0, 0)
}

func queueDepths(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.enqueue(startItem("b"))
	e.must(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: startItem("c"), Delay: time.Hour}), "enqueue delayed")
	e.enqueueWork(activityItem("x", 1, 1))
	e.enqueueWork(activityItem("x", 1, 2))
	e.fetch()     // a: locked
	e.fetchWork() // one activity locked
	e.wantEqual(e.depths(), provider.QueueDepths{Orchestrator: 1, Worker: 1, Delayed: 1, Locked: 2}, "queue depths")
	// b and the second activity wait; their visibility times are the oldest.
	q := e.queueDepths()
	for what, at := range map[string]time.Time{"orchestrator": q.OldestOrchestrator, "worker": q.OldestWorker} {
		if age := time.Since(at); at.IsZero() || age < 0 || age > time.Minute {
			t.Errorf("oldest ready %s message visible at %v (%v ago), want a moment ago", what, at, age)
		}
	}
	e.fetch()
	e.fetchWork()
	if q := e.queueDepths(); !q.OldestOrchestrator.IsZero() || !q.OldestWorker.IsZero() {
		t.Errorf("oldest ready messages with every ready one locked: %v, %v, want none", q.OldestOrchestrator, q.OldestWorker)
	}
}

// The cause of an abandon is what an operator sees while the instance waits
// to be retried; the next committed turn clears it.
func abandonCauseIsLastError(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.wantEqual(e.info("a").LastError, (*provider.ErrorDetails)(nil), "last error of a healthy instance")
	e.enqueue(externalItem("a", "x"))
	item := e.fetch()
	cause := &provider.ErrorDetails{Class: provider.ErrorConfiguration, Kind: provider.FailureNondeterminism,
		Message: `history event 2: expected ActivityScheduled "A", got ActivityScheduled "B"`}
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: shortLock, IgnoreAttempt: true, Cause: cause}), "abandon with a cause")
	if got := e.info("a").LastError; got == nil || *got != *cause {
		e.t.Fatalf("last error after abandon: %+v, want %+v", got, cause)
	}
	time.Sleep(pastShortLock)
	item = e.fetch()
	if got := e.info("a").LastError; got == nil || *got != *cause {
		e.t.Fatalf("last error while retrying: %+v, want it kept until a turn commits", got)
	}
	e.ack(item, provider.OrchestrationAck{ExecutionID: item.ExecutionID, HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}})
	e.wantEqual(e.info("a").LastError, (*provider.ErrorDetails)(nil), "last error after a committed turn")
}

// backlogByName counts ready messages by the orchestration or activity they
// are for: delayed and locked ones are not ready.
func backlogByName(t *testing.T, f Factory) {
	e := newEnv(t, f)
	b, err := e.a.GetBacklog(e.ctx)
	e.must(err, "backlog of an empty store")
	e.wantEqual(len(b.Orchestrations)+len(b.Activities), 0, "backlog of an empty store")

	e.createNamed("h1", "Hello")
	e.enqueue(externalItem("h1", "go"))
	e.enqueue(startItem("s1"))
	e.enqueue(startItem("s2"))
	e.must(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: startItem("later"), Delay: time.Hour}), "enqueue delayed")
	greet := activityItem("h1", 1, 7)
	greet.Name = "Greet"
	e.enqueueWork(greet)
	e.enqueueWork(activityItem("h1", 1, 8))
	e.enqueueWork(activityItem("h1", 1, 9))
	e.fetchWork() // the oldest, Greet: locked, not ready
	b, err = e.a.GetBacklog(e.ctx)
	e.must(err, "backlog")
	names := func(rows []provider.NamedBacklog) map[string]int64 {
		m := map[string]int64{}
		for _, r := range rows {
			m[r.Name] = r.Ready
			if r.Oldest.IsZero() || time.Since(r.Oldest) > time.Minute {
				e.t.Errorf("backlog of %s: oldest %v, want about now", r.Name, r.Oldest)
			}
		}
		return m
	}
	e.wantEqual(names(b.Orchestrations), map[string]int64{"Hello": 1, orchName: 2}, "orchestration backlog")
	e.wantEqual(names(b.Activities), map[string]int64{"Act": 2}, "activity backlog")
}
