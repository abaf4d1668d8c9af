package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func pruningCases() []Case {
	return []Case{
		{Name: "KeepLast", Run: pruneKeepLast},
		{Name: "CompletedBefore", Run: pruneCompletedBefore},
		{Name: "NeverPrunesCurrentExecution", Run: pruneNeverCurrent},
		{Name: "BothConditionsMustHold", Run: pruneBothConditions},
		{Name: "UnknownInstanceNotFound", Run: pruneUnknown},
	}
}

// generations creates an instance with n executions, the last one running.
func generations(e *env, n int) {
	e.t.Helper()
	e.create("a")
	for range n - 1 {
		e.continueAsNew("a")
	}
}

func pruneKeepLast(t *testing.T, f Factory) {
	e := newEnv(t, f)
	generations(e, 5)
	res, err := e.a.PruneExecutions(e.ctx, provider.PruneRequest{Instance: "a", Options: provider.PruneOptions{KeepLast: 2}})
	e.must(err, "prune")
	e.wantEqual(res, provider.PruneResult{ExecutionsDeleted: 3, EventsDeleted: 9}, "prune result")
	ids, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "a"})
	e.must(err, "list executions")
	e.wantEqual(ids, []int64{4, 5}, "executions left")
	_, err = e.p.ReadHistory(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: 4})
	e.must(err, "history of kept execution")
}

func pruneCompletedBefore(t *testing.T, f Factory) {
	e := newEnv(t, f)
	generations(e, 2)
	time.Sleep(50 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(50 * time.Millisecond)
	e.continueAsNew("a")
	res, err := e.a.PruneExecutions(e.ctx, provider.PruneRequest{Instance: "a", Options: provider.PruneOptions{CompletedBefore: cutoff}})
	e.must(err, "prune")
	e.wantEqual(res.ExecutionsDeleted, 1, "executions pruned")
	ids, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "a"})
	e.must(err, "list executions")
	e.wantEqual(ids, []int64{2, 3}, "executions left")
}

func pruneNeverCurrent(t *testing.T, f Factory) {
	e := newEnv(t, f)
	generations(e, 3)
	e.finish("a", provider.StatusCompleted, `1`)
	_, err := e.a.PruneExecutions(e.ctx, provider.PruneRequest{Instance: "a", Options: provider.PruneOptions{CompletedBefore: time.Now().Add(time.Hour)}})
	e.must(err, "prune")
	ids, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "a"})
	e.must(err, "list executions")
	e.wantEqual(ids, []int64{3}, "executions left")
	e.wantEqual(len(e.history("a")), 3, "current history")
}

func pruneBothConditions(t *testing.T, f Factory) {
	e := newEnv(t, f)
	generations(e, 4)
	_, err := e.a.PruneExecutions(e.ctx, provider.PruneRequest{Instance: "a", Options: provider.PruneOptions{KeepLast: 1, CompletedBefore: time.Now().Add(-time.Hour)}})
	e.must(err, "prune")
	ids, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "a"})
	e.must(err, "list executions")
	e.wantEqual(ids, []int64{1, 2, 3, 4}, "nothing completed an hour ago, so nothing pruned")
}

func pruneUnknown(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.a.PruneExecutions(e.ctx, provider.PruneRequest{Instance: "unknown", Options: provider.PruneOptions{KeepLast: 1}})
	e.wantErr(err, provider.ErrNotFound, "prune of unknown instance")
}
