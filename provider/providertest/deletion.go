package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

func deletionCases() []Case {
	return []Case{
		{Name: "DeleteCompletedInstance", Run: deleteCompleted},
		{Name: "DeleteRunningWithoutForceRefused", Run: deleteRunningRefused},
		{Name: "DeleteRunningWithForce", Run: deleteRunningForced},
		{Name: "DeleteCascadesToDescendants", Run: deleteCascades},
		{Name: "DeleteOfSubOrchestrationRefusedWithoutForce", Run: deleteChildRefused},
		{Name: "ForceDeleteOfChildOfRunningParentRefused", Run: forceDeleteChildOfRunningParentRefused},
		{Name: "DeleteUnknownInstanceNotFound", Run: deleteUnknown},
		{Name: "DeleteCleansQueues", Run: deleteCleansQueues},
		{Name: "DeleteReleasesLocks", Run: deleteReleasesLocks},
		{Name: "ForceDeletePreventsInFlightAckFromRecreating", Run: forceDeleteBlocksInFlightAck},
		{Name: "RunningChildBlocksDeleteOfFinishedRoot", Run: runningChildBlocksDelete},
		{Name: "DeleteLeavesOtherInstancesAlone", Run: deleteLeavesOthers},
		{Name: "InstanceIDReusableAfterDelete", Run: instanceIDReusable},
		{Name: "GetParent", Run: getParent},
		{Name: "ListChildren", Run: listChildren},
		{Name: "InstanceTree", Run: instanceTree},
		{Name: "MultiDeleteIsAllOrNothing", Run: multiDeleteAllOrNothing},
		{Name: "MultiDeleteDeletesAll", Run: multiDeleteDeletesAll},
	}
}

// family creates root -> child -> grandchild and a second child, all finished.
func family(e *env) {
	e.t.Helper()
	e.create("root")
	e.createChild("child", "root")
	e.createChild("child2", "root")
	e.createChild("grandchild", "child")
	for _, id := range []string{"grandchild", "child", "child2", "root"} {
		e.finish(id, provider.StatusCompleted, `1`)
	}
}

func deleteCompleted(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.finish("a", provider.StatusCompleted, `1`)
	res, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}})
	e.must(err, "delete")
	e.wantEqual(res, provider.DeleteResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 3}, "delete result")
	e.wantEqual(e.exists("a"), false, "instance after delete")
	e.wantEqual(len(e.history("a")), 0, "history after delete")
}

func deleteRunningRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}})
	e.wantErr(err, provider.ErrInstanceRunning, "delete of running instance")
	e.wantEqual(e.exists("a"), true, "instance after refused delete")
}

func deleteRunningForced(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	res, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}, Force: true})
	e.must(err, "force delete")
	e.wantEqual(res.InstancesDeleted, 1, "instances deleted")
	e.wantEqual(e.exists("a"), false, "instance after force delete")
}

func deleteCascades(t *testing.T, f Factory) {
	e := newEnv(t, f)
	family(e)
	res, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"root"}})
	e.must(err, "delete root")
	e.wantEqual(res.InstancesDeleted, 4, "instances deleted")
	for _, id := range []string{"root", "child", "child2", "grandchild"} {
		e.wantEqual(e.exists(id), false, id+" after cascade")
	}
}

func deleteChildRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	family(e)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"child"}})
	e.wantErr(err, provider.ErrInvalidArgument, "delete of sub-orchestration")
	e.wantEqual(e.exists("child"), true, "child after refused delete")
	res, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"child"}, Force: true})
	e.must(err, "force delete of sub-orchestration")
	e.wantEqual(res.InstancesDeleted, 2, "child and grandchild deleted")
	e.wantEqual(e.exists("root"), true, "root after deleting a child")
}

// A running parent waits for its children: deleting one, even with force,
// would leave the parent waiting for an answer that never comes.
func forceDeleteChildOfRunningParentRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("root")
	e.createChild("child", "root")
	e.finish("child", provider.StatusCompleted, `1`)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"child"}, Force: true})
	e.wantErr(err, provider.ErrInstanceRunning, "force delete of a child of a running parent")
	e.wantEqual(e.exists("child"), true, "child after refused delete")
	_, err = e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"child"}, Force: true})
	e.wantErr(err, provider.ErrInstanceRunning, "force multi-delete of a child of a running parent")
	e.finish("root", provider.StatusCompleted, `1`)
	res, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"child"}, Force: true})
	e.must(err, "force delete of a child once its parent finished")
	e.wantEqual(res.InstancesDeleted, 1, "instances deleted")
}

func deleteUnknown(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"unknown"}, Force: true})
	e.wantErr(err, provider.ErrNotFound, "delete of unknown instance")
}

func deleteCleansQueues(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2, 3)
	e.enqueue(externalItem("a", "pending"))
	e.create("b")
	e.schedule("b", 2)
	res, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}, Force: true})
	e.must(err, "force delete")
	e.wantEqual(res.MessagesDeleted, 3, "queued messages deleted")
	e.wantEqual(e.depths(), provider.QueueDepths{Worker: 1}, "queue depths after delete")
	e.wantEqual(e.fetchWork().Item.Instance, "b", "other instance's work")
}

func deleteReleasesLocks(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "x"))
	e.fetch()
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}, Force: true})
	e.must(err, "force delete of locked instance")
	e.enqueue(startItem("a"))
	e.wantEqual(e.fetch().Instance, "a", "restarted instance fetchable at once")
}

func forceDeleteBlocksInFlightAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "x"))
	item := e.fetch()
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}, Force: true})
	e.must(err, "force delete")
	err = AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)},
		WorkerItems:  []provider.WorkItem{activityItem("a", 1, 3)},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: orchName}})
	e.wantErr(err, provider.ErrLockNotHeld, "in-flight ack after force delete")
	e.wantEqual(e.exists("a"), false, "instance recreated by in-flight ack")
	e.wantEqual(e.depths(), provider.QueueDepths{}, "queue depths")
}

func runningChildBlocksDelete(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("root")
	e.createChild("child", "root")
	e.finish("root", provider.StatusFailed, `"x"`)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"root"}})
	e.wantErr(err, provider.ErrInstanceRunning, "delete with running child")
	e.wantEqual(e.exists("root") && e.exists("child"), true, "root and child after refused delete")
}

func deleteLeavesOthers(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.create("b")
	e.finish("a", provider.StatusCompleted, `1`)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}})
	e.must(err, "delete")
	e.wantEqual(len(e.history("b")), 1, "other instance's history")
}

func instanceIDReusable(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	e.finish("a", provider.StatusCompleted, `1`)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}})
	e.must(err, "delete")
	e.create("a")
	info := e.info("a")
	e.wantEqual([]any{info.CurrentExecutionID, info.Status, len(e.history("a"))}, []any{1, provider.StatusRunning, 1}, "re-created instance")
}

func getParent(t *testing.T, f Factory) {
	e := newEnv(t, f)
	family(e)
	p, ok, err := e.a.GetParent(e.ctx, provider.InstanceRequest{Instance: "grandchild"})
	e.must(err, "get parent")
	e.wantEqual([]any{p, ok}, []any{"child", true}, "parent of grandchild")
	_, ok, err = e.a.GetParent(e.ctx, provider.InstanceRequest{Instance: "root"})
	e.must(err, "get parent of root")
	e.wantEqual(ok, false, "root has a parent")
	_, _, err = e.a.GetParent(e.ctx, provider.InstanceRequest{Instance: "unknown"})
	e.wantErr(err, provider.ErrNotFound, "parent of unknown instance")
}

func listChildren(t *testing.T, f Factory) {
	e := newEnv(t, f)
	family(e)
	kids, err := e.a.ListChildren(e.ctx, provider.InstanceRequest{Instance: "root"})
	e.must(err, "list children")
	e.wantEqual(kids, []string{"child", "child2"}, "children of root")
	none, err := e.a.ListChildren(e.ctx, provider.InstanceRequest{Instance: "grandchild"})
	e.must(err, "list children of leaf")
	e.wantEqual(len(none), 0, "children of leaf")
}

func instanceTree(t *testing.T, f Factory) {
	e := newEnv(t, f)
	family(e)
	tree, err := e.a.GetInstanceTree(e.ctx, provider.InstanceRequest{Instance: "root"})
	e.must(err, "instance tree")
	e.wantEqual(tree.Instances, []string{"root", "child", "child2", "grandchild"}, "tree, parents first")
	_, err = e.a.GetInstanceTree(e.ctx, provider.InstanceRequest{Instance: "unknown"})
	e.wantErr(err, provider.ErrNotFound, "tree of unknown instance")
}

func multiDeleteAllOrNothing(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("done")
	e.finish("done", provider.StatusCompleted, `1`)
	e.create("running")
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"done", "running"}})
	e.wantErr(err, provider.ErrInstanceRunning, "multi-delete including a running instance")
	e.wantEqual(e.exists("done"), true, "finished instance after failed multi-delete")
}

func multiDeleteDeletesAll(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
		e.finish(id, provider.StatusCompleted, `1`)
	}
	res, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a", "c"}})
	e.must(err, "multi-delete")
	e.wantEqual([]any{res.InstancesDeleted, res.ExecutionsDeleted, res.EventsDeleted}, []any{2, 2, 6}, "multi-delete result")
	e.wantEqual([]bool{e.exists("a"), e.exists("b"), e.exists("c")}, []bool{false, true, false}, "instances left")
}
