package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func bulkDeletionCases() []Case {
	return []Case{
		{Name: "ByInstanceIDs", Run: bulkByIDs},
		{Name: "CompletedBefore", Run: bulkCompletedBefore},
		{Name: "CompletedBeforeTheEpochDeletesNothing", Run: bulkBeforeEpoch},
		{Name: "Limit", Run: bulkLimit},
		{Name: "SkipsRunningInstances", Run: bulkSkipsRunning},
		{Name: "CascadesAndSkipsSubOrchestrationsAsRoots", Run: bulkCascades},
		{Name: "EmptyFilterDeletesAllTerminal", Run: bulkEmptyFilter},
	}
}

func finished(e *env, ids ...string) {
	e.t.Helper()
	for _, id := range ids {
		e.create(id)
		e.finish(id, provider.StatusCompleted, `1`)
	}
}

func bulkByIDs(t *testing.T, f Factory) {
	e := newEnv(t, f)
	finished(e, "a", "b", "c")
	res, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{Instances: []string{"a", "c", "unknown"}})
	e.must(err, "bulk delete")
	e.wantEqual(res.InstancesDeleted, 2, "instances deleted")
	e.wantEqual([]bool{e.exists("a"), e.exists("b"), e.exists("c")}, []bool{false, true, false}, "instances left")
}

func bulkCompletedBefore(t *testing.T, f Factory) {
	e := newEnv(t, f)
	finished(e, "old")
	time.Sleep(50 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(50 * time.Millisecond)
	finished(e, "new")
	res, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{CompletedBefore: cutoff})
	e.must(err, "bulk delete")
	e.wantEqual(res.InstancesDeleted, 1, "instances deleted")
	e.wantEqual([]bool{e.exists("old"), e.exists("new")}, []bool{false, true}, "instances left")
}

// bulkBeforeEpoch: a bound at the Unix epoch (zero milliseconds, not the
// zero time) is a bound: nothing completed before it.
func bulkBeforeEpoch(t *testing.T, f Factory) {
	e := newEnv(t, f)
	finished(e, "a")
	res, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{CompletedBefore: time.UnixMilli(0)})
	e.must(err, "bulk delete")
	e.wantEqual(res.InstancesDeleted, 0, "instances deleted")
	e.wantEqual(e.exists("a"), true, "a left")
}

func bulkLimit(t *testing.T, f Factory) {
	e := newEnv(t, f)
	finished(e, "a", "b", "c", "d")
	res, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{Limit: 3})
	e.must(err, "bulk delete")
	e.wantEqual(res.InstancesDeleted, 3, "instances deleted")
	e.wantEqual(len(e.listIDs(provider.ListRequest{})), 1, "instances left")
}

func bulkSkipsRunning(t *testing.T, f Factory) {
	e := newEnv(t, f)
	finished(e, "done")
	e.create("running")
	res, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{Instances: []string{"done", "running"}})
	e.must(err, "bulk delete")
	e.wantEqual(res.InstancesDeleted, 1, "instances deleted")
	e.wantEqual(e.exists("running"), true, "running instance after bulk delete")
}

func bulkCascades(t *testing.T, f Factory) {
	e := newEnv(t, f)
	family(e)
	res, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{Instances: []string{"child"}})
	e.must(err, "bulk delete naming a child")
	e.wantEqual(res.InstancesDeleted, 0, "children deleted as roots")
	res, err = e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{})
	e.must(err, "bulk delete")
	e.wantEqual(res.InstancesDeleted, 4, "family deleted through its root")
}

func bulkEmptyFilter(t *testing.T, f Factory) {
	e := newEnv(t, f)
	finished(e, "a", "b")
	e.create("c")
	e.finish("c", provider.StatusFailed, `"x"`)
	e.create("d")
	e.finish("d", provider.StatusTerminated, `"x"`)
	e.create("live")
	res, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{})
	e.must(err, "bulk delete")
	e.wantEqual(res.InstancesDeleted, 4, "terminal instances deleted")
	e.wantEqual(e.listIDs(provider.ListRequest{}), []string{"live"}, "instances left")
}
