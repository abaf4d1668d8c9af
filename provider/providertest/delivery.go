package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// Client messages (events, cancel, terminate) go only to an instance that
// can still read them; anything else fails at the sender.
func deliveryCases() []Case {
	return []Case{
		{Name: "SendToUnknownInstanceRefused", Run: sendToUnknownRefused},
		{Name: "SendToInstanceBeingStartedAccepted", Run: sendToStartingAccepted},
		{Name: "SendToRunningInstanceAccepted", Run: sendToRunningAccepted},
		{Name: "SendToFinishedInstanceRefused", Run: sendToFinishedRefused},
		{Name: "SendAfterContinueAsNewAccepted", Run: sendAfterContinueAsNewAccepted},
		{Name: "SendBetweenExecutionsAccepted", Run: sendBetweenExecutionsAccepted},
		{Name: "EventRacingContinueAsNewKept", Run: eventRacingContinueAsNewKept},
		{Name: "StartQueuedUntilFirstAck", Run: startQueuedUntilFirstAck},
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

// endAsContinueAsNew acks item as the last turn of its execution, queuing
// the ContinueAsNew message; the next execution has not started.
func (e *env) endAsContinueAsNew(item *provider.OrchestrationAck, from *provider.OrchestrationItem) {
	item.HistoryDelta = append(item.HistoryDelta, event(from, int64(len(item.HistoryDelta))+1, provider.EventOrchestrationContinuedAsNew))
	item.Metadata.Status, item.Metadata.Output = provider.StatusContinuedAsNew, `"next"`
	item.OrchestratorItems = append(item.OrchestratorItems,
		provider.WorkItem{Kind: provider.WorkContinueAsNew, Instance: from.Instance, Name: orchName, Input: `"next"`, ExecutionID: from.ExecutionID + 1})
}

// From a continue-as-new commit until the next execution's first turn the
// instance runs on: a message sent then is queued for that turn.
func sendBetweenExecutionsAccepted(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		e.endAsContinueAsNew(ack, item)
	})
	for _, item := range []provider.WorkItem{externalItem("a", "x"),
		{Kind: provider.WorkCancelRequested, Instance: "a", Reason: "r"},
		{Kind: provider.WorkCancelInstance, Instance: "a", Reason: "r"}} {
		e.must(e.p.SendToInstance(e.ctx, item), "send "+string(item.Kind)+" between executions")
	}
	e.wantEqual(kinds(e.fetchInstance("a").Messages), []provider.WorkItemKind{provider.WorkContinueAsNew,
		provider.WorkExternalRaised, provider.WorkCancelRequested, provider.WorkCancelInstance}, "the next execution's first turn")
}

// An event accepted while the execution's last turn holds the lock is queued
// before that turn's ContinueAsNew message. It stays queued through the
// continue-as-new commit and through an abandoned fetch, and is delivered
// with the ContinueAsNew message.
func eventRacingContinueAsNewKept(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	e.must(e.p.SendToInstance(e.ctx, externalItem("a", "late")), "send while the last turn runs")
	ack := provider.OrchestrationAck{ExecutionID: item.ExecutionID, HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}}
	e.endAsContinueAsNew(&ack, item)
	e.ack(item, ack)
	first := e.fetchInstance("a")
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: first.LockToken, IgnoreAttempt: true}), "abandon")
	next := e.fetchInstance("a")
	e.wantEqual(kinds(next.Messages), []provider.WorkItemKind{provider.WorkExternalRaised, provider.WorkContinueAsNew}, "messages after the continue-as-new")
	e.wantEqual(next.Messages[0].Name, "late", "the racing event")
	e.wantEqual(next.Status, provider.StatusContinuedAsNew, "status the fetch reports")
}

func startQueuedUntilFirstAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	queued := func(what string, want bool) {
		t.Helper()
		got, err := e.a.StartQueued(e.ctx, provider.InstanceRequest{Instance: "a"})
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
