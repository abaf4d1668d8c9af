package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// A provider may keep the histories it read or wrote, to spare the next
// turn reading them again; a turn must still get exactly what the store holds.
func historyReadCases() []Case {
	return []Case{
		{Name: "FetchSeesEventsAPeerAppended", Run: fetchSeesEventsAPeerAppended},
		{Name: "FetchSeesAnInstanceStartedAgain", Run: fetchSeesAnInstanceStartedAgain},
		{Name: "FetchSeesTheNextExecutionAlone", Run: fetchSeesTheNextExecutionAlone},
	}
}

func (e *env) peer() *env {
	p := e.f.OpenPeer(e.t, e.p)
	return &env{t: e.t, f: e.f, p: p, a: p, ctx: e.ctx}
}

// wantTurnHistory fetches the instance's next turn (after queueing a message
// for it) and checks the turn's history is the store's, then acks it empty:
// by name first, then as any fetch does.
func (e *env) wantTurnHistory(instance string, want []provider.Event) {
	e.t.Helper()
	e.enqueue(externalItem(instance, "check"))
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{Instance: instance, LockFor: longLock})
	e.must(err, "fetch the turn of "+instance)
	if item == nil {
		e.t.Fatalf("no turn of %s fetched by name", instance)
	}
	e.wantEqual(item.History, want, "history of the turn of "+instance+" fetched by name")
	e.ack(item, provider.OrchestrationAck{ExecutionID: item.ExecutionID})
	e.enqueue(externalItem(instance, "check"))
	item = e.fetchInstance(instance)
	e.wantEqual(item.History, want, "history of the fetched turn of "+instance)
	e.ack(item, provider.OrchestrationAck{ExecutionID: item.ExecutionID})
}

// Another process (after this one's lock was released, or expired) ran turns
// of an instance this one ran before.
func fetchSeesEventsAPeerAppended(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", nil)
	peer := e.peer()
	peer.turn("a", nil)
	peer.turn("a", nil)
	want := peer.history("a")
	e.wantEqual(len(want), 4, "history the peer left")
	e.wantTurnHistory("a", want)
}

// Another process deleted an instance this one ran, and started it again
// with a history whose last event has the same ID and stored form as the
// old one's: the turn gets the new history all the same.
func fetchSeesAnInstanceStartedAgain(t *testing.T, f Factory) {
	e := newEnv(t, f)
	lifeOf := func(e *env, input string) {
		e.enqueue(startItem("a"))
		item := e.fetchInstance("a")
		ack := firstTurn(item)
		ack.HistoryDelta[0].Input, ack.HistoryDelta[0].Time = input, 1
		e.ack(item, ack)
		e.enqueue(externalItem("a", "tick"))
		item = e.fetchInstance("a")
		e.ack(item, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
			HistoryDelta: []provider.Event{{ID: 2, Kind: provider.EventExternalRaised, Name: "tick", Time: 1}}})
	}
	lifeOf(e, `"first"`)
	peer := e.peer()
	_, err := peer.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}, Force: true})
	e.must(err, "peer deletes a")
	lifeOf(peer, `"second"`)
	want := peer.history("a")
	e.wantEqual(want[0].Input, `"second"`, "input of the second life")
	e.wantTurnHistory("a", want)
}

// After a continue-as-new the turn's history is the new execution's only.
func fetchSeesTheNextExecutionAlone(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", nil)
	e.continueAsNew("a")
	want := e.history("a")
	e.wantEqual(len(want), 1, "history of the second execution")
	e.wantTurnHistory("a", want)
}
