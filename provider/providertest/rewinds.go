package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

func rewindCases() []Case {
	return []Case{
		{Name: "RewindOpensTheNextExecutionOfAFailedInstance", Run: rewindOpensNextExecution},
		{Name: "RewindRefusals", Run: rewindRefusals},
	}
}

// rewindItem is a rewind of instance's execution failed into the next.
func rewindItem(instance string, failed int64) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkRewind, Instance: instance, ExecutionID: failed + 1, Name: orchName,
		History: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted, Name: orchName}}}
}

// A rewind of a failed root instance makes its next execution current and
// Running at once, keeps the failed one, and its message is the next
// turn's, with the events it carries; the turn fills the new execution.
func rewindOpensNextExecution(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("r1")
	e.finish("r1", provider.StatusFailed, `{"message":"boom"}`)
	e.must(e.a.QueueRewind(e.ctx, provider.RewindRequest{Item: rewindItem("r1", 1)}), "rewind r1")
	info := e.info("r1")
	e.wantEqual(info.Status, provider.StatusRunning, "status right after the rewind")
	e.wantEqual(info.CurrentExecutionID, int64(2), "current execution right after the rewind")
	failed, err := e.a.GetExecutionInfo(e.ctx, provider.ExecutionRequest{Instance: "r1", ExecutionID: 1})
	e.must(err, "execution 1")
	e.wantEqual(failed.Status, provider.StatusFailed, "the failed execution's status")

	item := e.fetchInstance("r1")
	e.wantEqual(item.ExecutionID, int64(2), "the fetched turn's execution")
	e.wantEqual(len(item.History), 0, "the new execution's history before its first turn")
	if len(item.Messages) != 1 || item.Messages[0].Kind != provider.WorkRewind || len(item.Messages[0].History) != 1 {
		t.Fatalf("the turn's messages: %+v, want the rewind with its events", item.Messages)
	}
	started := provider.Event{ID: 1, Kind: provider.EventOrchestrationStarted, Name: orchName, ExecutionID: 2, RewoundFrom: 1}
	e.ack(item, provider.OrchestrationAck{ExecutionID: 2, HistoryDelta: []provider.Event{started, {ID: 2, Kind: provider.EventTimerCreated, FireAt: 1}}})
	h := e.history("r1")
	if len(h) != 2 || h[0].RewoundFrom != 1 {
		t.Errorf("execution 2's history %+v, want the rewind's start (RewoundFrom 1) and the turn's event", h)
	}
	ids, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "r1"})
	e.must(err, "list executions")
	e.wantEqual(len(ids), 2, "executions after the rewind")
}

// Only a failed root's current execution is rewound, once; nothing is
// queued otherwise.
func rewindRefusals(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("running")
	e.create("parent")
	e.createChild("child", "parent")
	e.finish("child", provider.StatusFailed, `{"message":"boom"}`)
	e.create("failed")
	e.finish("failed", provider.StatusFailed, `{"message":"boom"}`)
	before := e.depths()
	for _, tc := range []struct {
		what string
		item provider.WorkItem
		want error
	}{
		{"a running instance", rewindItem("running", 1), provider.ErrNotRewindable},
		{"a sub-orchestration", rewindItem("child", 1), provider.ErrNotRewindable},
		{"an unknown instance", rewindItem("nobody", 1), provider.ErrNotFound},
		{"an execution that is not current", rewindItem("failed", 2), provider.ErrNotRewindable},
		{"a message of another kind", provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: "failed", ExecutionID: 2}, provider.ErrInvalidArgument},
		{"no events", provider.WorkItem{Kind: provider.WorkRewind, Instance: "failed", ExecutionID: 2}, provider.ErrInvalidArgument},
	} {
		e.wantErr(e.a.QueueRewind(e.ctx, provider.RewindRequest{Item: tc.item}), tc.want, "rewind of "+tc.what)
	}
	e.wantEqual(e.depths(), before, "queue depths after refused rewinds")
	e.wantEqual(e.info("failed").Status, provider.StatusFailed, "a refused rewind's instance")
	e.must(e.a.QueueRewind(e.ctx, provider.RewindRequest{Item: rewindItem("failed", 1)}), "rewind failed")
	e.wantErr(e.a.QueueRewind(e.ctx, provider.RewindRequest{Item: rewindItem("failed", 1)}), provider.ErrNotRewindable, "a second rewind")
}
