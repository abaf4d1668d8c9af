package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

func multiExecutionCases() []Case {
	return []Case{
		{Name: "ContinueAsNewCreatesNewExecution", Run: continueAsNewCreatesExecution},
		{Name: "EachExecutionHasItsOwnHistory", Run: executionsHaveOwnHistory},
		{Name: "ReadHistoryReturnsLatestExecution", Run: readHistoryLatest},
		{Name: "FetchLoadsLatestExecution", Run: fetchLoadsLatestExecution},
		{Name: "ExecutionIDsAreSequential", Run: executionIDsSequential},
		{Name: "OldExecutionsKeepTheirStatusAndHistory", Run: oldExecutionsPersist},
		{Name: "StaleExecutionCompletionStillDelivered", Run: staleCompletionDelivered},
	}
}

func continueAsNewCreatesExecution(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	info := e.info("a")
	e.wantEqual([]any{info.CurrentExecutionID, info.Status}, []any{2, provider.StatusRunning}, "current execution")
}

func executionsHaveOwnHistory(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	h1, err := e.p.ReadHistory(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: 1})
	e.must(err, "read execution 1")
	h2, err := e.p.ReadHistory(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: 2})
	e.must(err, "read execution 2")
	e.wantEqual(eventIDs(h1), []int64{1, 2, 3}, "execution 1 events")
	e.wantEqual(eventIDs(h2), []int64{1}, "execution 2 events")
	e.wantEqual(h1[2].Kind, provider.EventOrchestrationContinuedAsNew, "execution 1 last event")
}

func readHistoryLatest(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	h := e.history("a")
	e.wantEqual([]any{len(h), h[0].Kind}, []any{1, provider.EventOrchestrationStarted}, "latest history")
}

func fetchLoadsLatestExecution(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	e.enqueue(externalItem("a", "x"))
	item := e.fetch()
	e.wantEqual([]any{item.ExecutionID, len(item.History)}, []any{2, 1}, "fetched execution")
}

func executionIDsSequential(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	for range 3 {
		e.continueAsNew("a")
	}
	ids, err := e.a.ListExecutions(e.ctx, provider.InstanceRequest{Instance: "a"})
	e.must(err, "list executions")
	e.wantEqual(ids, []int64{1, 2, 3, 4}, "execution IDs")
}

func oldExecutionsPersist(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	e.continueAsNew("a")
	e.finish("a", provider.StatusCompleted, `"done"`)
	for _, id := range []int64{1, 2} {
		info, err := e.a.GetExecutionInfo(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: id})
		e.must(err, "execution info")
		e.wantEqual(info.Status, provider.StatusContinuedAsNew, "status of old execution")
		e.wantEqual(info.EventCount, 3, "events of old execution")
	}
	info, err := e.a.GetExecutionInfo(e.ctx, provider.ExecutionRequest{Instance: "a", ExecutionID: 3})
	e.must(err, "execution info")
	e.wantEqual(info.Status, provider.StatusCompleted, "status of last execution")
}

func staleCompletionDelivered(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	e.enqueue(*completionItem("a", 1, 7))
	item := e.fetch()
	e.wantEqual([]any{item.ExecutionID, item.Messages[0].ExecutionID}, []any{2, 1}, "current vs message execution")
}
