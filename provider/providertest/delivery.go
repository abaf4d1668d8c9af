package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// Client messages (events, cancel, terminate) go only to an instance that
// can still read them; anything else fails at the sender.
func deliveryCases() []Case {
	return []Case{
		{"SendToUnknownInstanceRefused", sendToUnknownRefused},
		{"SendToInstanceBeingStartedAccepted", sendToStartingAccepted},
		{"SendToRunningInstanceAccepted", sendToRunningAccepted},
		{"SendToFinishedInstanceRefused", sendToFinishedRefused},
		{"SendAfterContinueAsNewAccepted", sendAfterContinueAsNewAccepted},
		{"StartQueuedUntilFirstAck", startQueuedUntilFirstAck},
	}
}

func sendToUnknownRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.wantErr(e.p.SendToInstance(e.ctx, externalItem("ghost", "x")), provider.ErrNotFound, "send to an unknown instance")
	e.wantEqual(e.depths().Orchestrator, int64(0), "queued messages after the refusal")
}

func sendToStartingAccepted(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.must(e.p.SendToInstance(e.ctx, externalItem("a", "x")), "send to an instance whose start is queued")
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration, provider.WorkExternalRaised},
		"first turn's messages")
}

func sendToRunningAccepted(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	for _, item := range []provider.WorkItem{externalItem("a", "x"),
		{Kind: provider.WorkCancelRequested, Instance: "a", Reason: "r"},
		{Kind: provider.WorkCancelInstance, Instance: "a", Reason: "r"}} {
		e.must(e.p.SendToInstance(e.ctx, item), "send "+string(item.Kind)+" to a running instance")
	}
	e.wantEqual(len(e.fetchInstance("a").Messages), 3, "messages delivered")
}

func sendToFinishedRefused(t *testing.T, f Factory) {
	for _, status := range []provider.ExecutionStatus{provider.StatusCompleted, provider.StatusFailed, provider.StatusTerminated} {
		t.Run(string(status), func(t *testing.T) {
			e := newEnv(t, f)
			e.create("a")
			e.finish("a", status, `"out"`)
			e.wantErr(e.p.SendToInstance(e.ctx, externalItem("a", "x")), provider.ErrInstanceFinished, "send to a "+string(status)+" instance")
			e.wantEqual(e.depths().Orchestrator, int64(0), "queued messages after the refusal")
		})
	}
}

func sendAfterContinueAsNewAccepted(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.continueAsNew("a")
	e.must(e.p.SendToInstance(e.ctx, externalItem("a", "x")), "send to the new execution")
}

func startQueuedUntilFirstAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	queued := func(what string, want bool) {
		t.Helper()
		got, err := e.a.StartQueued(e.ctx, "a")
		e.must(err, "start queued")
		e.wantEqual(got, want, what)
	}
	queued("before any start", false)
	e.enqueue(externalItem("a", "x"))
	queued("with only an event queued", false)
	e.enqueue(startItem("a"))
	queued("with the start queued", true)
	item := e.fetch()
	queued("with the start fetched, not yet acked", true)
	e.ack(item, firstTurn(item))
	queued("after the first ack", false)
}
