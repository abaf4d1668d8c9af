package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

func customStatusCases() []Case {
	return []Case{
		{Name: "DefaultOnNewInstance", Run: customStatusDefault},
		{Name: "SetStoresValueAndBumpsVersion", Run: customStatusSet},
		{Name: "ClearRemovesValueAndBumpsVersion", Run: customStatusClear},
		{Name: "UnchangedWhenTurnDoesNotSetIt", Run: customStatusUnchanged},
		{Name: "VersionIncrementsOnEveryUpdate", Run: customStatusVersionIncrements},
		{Name: "PollWithCurrentVersionReportsNoChange", Run: customStatusPollNoChange},
		{Name: "UnknownInstanceNotFound", Run: customStatusUnknown},
		{Name: "SurvivesContinueAsNew", Run: customStatusSurvivesCAN},
		{Name: "VisibleInFetchedItem", Run: customStatusInItem},
	}
}

func setCustomStatus(e *env, instance string, u provider.CustomStatusUpdate) {
	e.t.Helper()
	e.turn(instance, func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) { ack.Metadata.CustomStatus = &u })
}

func (e *env) customStatus(instance string, known int64) (provider.CustomStatus, bool) {
	e.t.Helper()
	cs, changed, err := e.p.GetCustomStatus(e.ctx, provider.CustomStatusRequest{Instance: instance, KnownVersion: known})
	e.must(err, "get custom status")
	return cs, changed
}

func customStatusDefault(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	cs, changed := e.customStatus("a", 0)
	e.wantEqual([]any{cs.Value == nil, cs.Version, changed}, []any{true, 0, false}, "custom status of new instance")
}

func customStatusSet(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: `{"step":1}`})
	cs, changed := e.customStatus("a", 0)
	if cs.Value == nil {
		t.Fatal("custom status not stored")
	}
	e.wantEqual([]any{*cs.Value, cs.Version, changed}, []any{`{"step":1}`, 1, true}, "custom status after set")
}

func customStatusClear(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: "x"})
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Clear: true})
	cs, changed := e.customStatus("a", 1)
	e.wantEqual([]any{cs.Value == nil, cs.Version, changed}, []any{true, 2, true}, "custom status after clear")
}

func customStatusUnchanged(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: "keep"})
	e.turn("a", nil)
	cs, _ := e.customStatus("a", 0)
	e.wantEqual([]any{*cs.Value, cs.Version}, []any{"keep", 1}, "custom status after a turn without update")
}

func customStatusVersionIncrements(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	for i, v := range []string{"a", "b", "c"} {
		setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: v})
		cs, _ := e.customStatus("a", 0)
		e.wantEqual(cs.Version, i+1, "version after update")
	}
}

func customStatusPollNoChange(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: "v"})
	cs, changed := e.customStatus("a", 1)
	e.wantEqual([]any{changed, cs.Value == nil, cs.Version}, []any{false, true, 1}, "poll with current version")
}

func customStatusUnknown(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, _, err := e.p.GetCustomStatus(e.ctx, provider.CustomStatusRequest{Instance: "unknown"})
	e.wantErr(err, provider.ErrNotFound, "custom status of unknown instance")
}

func customStatusSurvivesCAN(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: "carried"})
	e.continueAsNew("a")
	cs, _ := e.customStatus("a", 0)
	e.wantEqual([]any{*cs.Value, cs.Version}, []any{"carried", 1}, "custom status after continue-as-new")
}

func customStatusInItem(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: "seen"})
	e.enqueue(externalItem("a", "x"))
	item := e.fetch()
	if item.CustomStatus == nil {
		t.Fatal("fetched item has no custom status")
	}
	e.wantEqual([]any{*item.CustomStatus, item.CustomStatusVersion}, []any{"seen", 1}, "custom status in item")
}
