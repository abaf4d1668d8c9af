package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

func creationCases() []Case {
	return []Case{
		{Name: "EnqueueDoesNotCreateInstance", Run: enqueueDoesNotCreate},
		{Name: "FetchDoesNotCreateInstance", Run: fetchDoesNotCreate},
		{Name: "FirstAckCreatesInstance", Run: firstAckCreates},
		{Name: "EmptyVersionHandled", Run: emptyVersionHandled},
		{Name: "VersionKeptWhenNotGiven", Run: versionKeptWhenNotGiven},
		{Name: "SubOrchestrationCreatedByItsOwnFirstAck", Run: subOrchestrationCreatedByOwnAck},
		{Name: "FetchOfNewInstanceUsesStartMessage", Run: fetchOfNewInstanceUsesStartMessage},
	}
}

func enqueueDoesNotCreate(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.wantEqual(e.exists("a"), false, "instance exists after enqueue")
	page, err := e.a.ListInstances(e.ctx, provider.ListRequest{})
	e.must(err, "list instances")
	e.wantEqual(len(page.Instances), 1, "listed after enqueue")
	e.wantEqual(page.Instances[0].Status, provider.StatusPending, "status of a queued start")
}

func fetchDoesNotCreate(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.wantEqual(item.Exists, false, "item.Exists before first ack")
	e.wantEqual(e.exists("a"), false, "instance exists after fetch")
}

func firstAckCreates(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	info := e.info("a")
	e.wantEqual(info.OrchestrationName, orchName, "orchestration name")
	e.wantEqual(info.Version, "1.0.0", "version")
	e.wantEqual(info.CurrentExecutionID, 1, "current execution")
	e.wantEqual(info.Status, provider.StatusRunning, "status")
	e.wantEqual(info.CreatedAt.IsZero(), false, "created-at set")
}

func emptyVersionHandled(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := startItem("a")
	start.Version = ""
	e.enqueue(start)
	item := e.fetch()
	e.wantEqual(item.Version, "", "item version")
	e.ack(item, firstTurn(item))
	e.wantEqual(e.info("a").Version, "", "stored version")
	e.enqueue(externalItem("a", "x"))
	e.wantEqual(e.fetch().Version, "", "version on next fetch")
}

func versionKeptWhenNotGiven(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", nil) // metadata without a version
	e.wantEqual(e.info("a").Version, "1.0.0", "version after turn without one")
}

func subOrchestrationCreatedByOwnAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("parent")
	e.turn("parent", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		child := startItem("child")
		child.ParentInstance, child.ParentExecutionID, child.ParentID = "parent", 1, 3
		ack.OrchestratorItems = []provider.WorkItem{child}
	})
	e.wantEqual(e.exists("child"), false, "child exists after parent's ack")
	item := e.fetch()
	e.wantEqual(item.Instance, "child", "fetched instance")
	e.wantEqual(item.ParentInstance, "parent", "item parent")
	e.ack(item, firstTurn(item))
	parent, ok, err := e.a.GetParent(e.ctx, provider.InstanceRequest{Instance: "child"})
	e.must(err, "get parent")
	e.wantEqual([]any{parent, ok}, []any{"parent", true}, "parent of child")
}

func fetchOfNewInstanceUsesStartMessage(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.wantEqual([]any{item.OrchestrationName, item.Version, item.ExecutionID, len(item.History)},
		[]any{orchName, "1.0.0", 1, 0}, "new instance item")
}
