package providertest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func valueCases() []Case {
	return []Case{
		{Name: "SetAndRead", Run: valuesSetAndRead},
		{Name: "Overwrite", Run: valuesOverwrite},
		{Name: "ClearOne", Run: valuesClearOne},
		{Name: "ReplaceClearsAll", Run: valuesReplaceClearsAll},
		{Name: "ReplaceWithNewValues", Run: valuesReplaceWithNew},
		{Name: "ClearMissingKeyIsNoError", Run: valuesClearMissingKey},
		{Name: "SetAfterClear", Run: valuesSetAfterClear},
		{Name: "ReadSomeKeys", Run: valuesReadSomeKeys},
		{Name: "ReadMissingKey", Run: valuesReadMissingKey},
		{Name: "ReadInstanceWithNone", Run: valuesReadInstanceWithNone},
		{Name: "ReadUnknownInstance", Run: valuesReadUnknownInstance},
		{Name: "ReadNeedsInstance", Run: valuesReadNeedsInstance},
		{Name: "IsolatedPerInstance", Run: valuesIsolatedPerInstance},
		{Name: "ClearIsolatedPerInstance", Run: valuesClearIsolated},
		{Name: "WrittenByFirstTurn", Run: valuesWrittenByFirstTurn},
		{Name: "KeptAfterCompletion", Run: valuesKeptAfterCompletion},
		{Name: "SurviveContinueAsNew", Run: valuesSurviveContinueAsNew},
		{Name: "OverwrittenInLaterExecution", Run: valuesOverwrittenInLaterExecution},
		{Name: "PruningKeepsValues", Run: valuesPruningKeeps},
		{Name: "DeletedWithInstance", Run: valuesDeletedWithInstance},
		{Name: "DeletedWithTree", Run: valuesDeletedWithTree},
		{Name: "BulkDeleteRemovesValues", Run: valuesBulkDelete},
		{Name: "IDReuseStartsEmpty", Run: valuesIDReuseStartsEmpty},
		{Name: "RolledBackWithFailedAck", Run: valuesRolledBackWithFailedAck},
		{Name: "NotWrittenWithLostLock", Run: valuesNotWrittenWithLostLock},
		{Name: "NotWrittenOnAbandon", Run: valuesNotWrittenOnAbandon},
		{Name: "NoStartNoValues", Run: valuesNoStartNoValues},
		{Name: "ReadWhileLocked", Run: valuesReadWhileLocked},
		{Name: "KeysWithAnyCharacters", Run: valuesKeysWithAnyCharacters},
		{Name: "ValuesRoundTripExactly", Run: valuesRoundTrip},
		{Name: "LargestValueAccepted", Run: valuesLargestAccepted},
		{Name: "OversizedValueRejected", Run: valuesOversizedRejected},
		{Name: "InvalidKeysRejected", Run: valuesInvalidKeysRejected},
		{Name: "NonJSONValueRejected", Run: valuesNonJSONRejected},
		{Name: "SetAndClearSameKeyRejected", Run: valuesSetAndClearRejected},
		{Name: "BatchedTurnsKeepTheirOwn", Run: valuesBatchedTurns},
		{Name: "WrittenWithNextTurnLocked", Run: valuesWithNextTurn, Path: PathNextTurn},
		{Name: "WrittenByDirectStart", Run: valuesByDirectStart, Path: PathDirectStart},
	}
}

func setValues(kv ...string) *provider.ValuesUpdate {
	u := &provider.ValuesUpdate{Set: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		u.Set[kv[i]] = kv[i+1]
	}
	return u
}

// valuesTurn runs a turn of instance that commits u.
func (e *env) valuesTurn(instance string, u *provider.ValuesUpdate) {
	e.t.Helper()
	e.turn(instance, func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) { ack.Values = u })
}

func (e *env) values(instance string, keys ...string) map[string]string {
	e.t.Helper()
	v, err := e.p.ReadValues(e.ctx, provider.ValuesRequest{Instance: instance, Keys: keys})
	e.must(err, "read values of "+instance)
	return v
}

// wantValues fails unless instance holds exactly want ("k=v" pairs, sorted by key).
func (e *env) wantValues(instance string, want ...string) {
	e.t.Helper()
	e.wantEqual(pairs(e.values(instance)), want, "values of "+instance)
}

func pairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func valuesSetAndRead(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`, "y", `{"n":"two"}`))
	e.wantValues("a", "x=1", `y={"n":"two"}`)
}

func valuesOverwrite(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.valuesTurn("a", setValues("x", `2`))
	e.wantValues("a", "x=2")
}

func valuesClearOne(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`, "y", `2`))
	e.valuesTurn("a", &provider.ValuesUpdate{Clear: []string{"x"}})
	e.wantValues("a", "y=2")
}

func valuesReplaceClearsAll(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`, "y", `2`))
	e.valuesTurn("a", &provider.ValuesUpdate{Replace: true})
	e.wantValues("a")
}

func valuesReplaceWithNew(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`, "y", `2`))
	u := setValues("y", `3`, "z", `4`)
	u.Replace = true
	e.valuesTurn("a", u)
	e.wantValues("a", "y=3", "z=4")
}

func valuesClearMissingKey(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.valuesTurn("a", &provider.ValuesUpdate{Clear: []string{"nope"}})
	e.wantValues("a", "x=1")
}

func valuesSetAfterClear(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.valuesTurn("a", &provider.ValuesUpdate{Clear: []string{"x"}})
	e.valuesTurn("a", setValues("x", `"back"`))
	e.wantValues("a", `x="back"`)
}

func valuesReadSomeKeys(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`, "y", `2`, "z", `3`))
	e.wantEqual(pairs(e.values("a", "x", "z", "missing")), []string{"x=1", "z=3"}, "values x, z and missing of a")
}

func valuesReadMissingKey(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.wantEqual(len(e.values("a", "y")), 0, "values read for a key a does not hold")
}

func valuesReadInstanceWithNone(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	v := e.values("a")
	if v == nil || len(v) != 0 {
		t.Fatalf("values of an instance without any: %v, want an empty map", v)
	}
}

func valuesReadUnknownInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.p.ReadValues(e.ctx, provider.ValuesRequest{Instance: "nobody"})
	e.wantErr(err, provider.ErrNotFound, "values of an unknown instance")
	e.enqueue(startItem("queued"))
	_, err = e.p.ReadValues(e.ctx, provider.ValuesRequest{Instance: "queued"})
	e.wantErr(err, provider.ErrNotFound, "values of an instance whose start is still queued")
}

func valuesReadNeedsInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.p.ReadValues(e.ctx, provider.ValuesRequest{})
	e.wantErr(err, provider.ErrInvalidArgument, "values of no instance")
}

func valuesIsolatedPerInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.create("b")
	e.valuesTurn("a", setValues("x", `"a"`))
	e.valuesTurn("b", setValues("x", `"b"`, "only-b", `1`))
	e.wantValues("a", `x="a"`)
	e.wantValues("b", "only-b=1", `x="b"`)
}

func valuesClearIsolated(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.create("b")
	e.valuesTurn("a", setValues("x", `1`))
	e.valuesTurn("b", setValues("x", `2`))
	e.valuesTurn("a", &provider.ValuesUpdate{Replace: true})
	e.valuesTurn("b", &provider.ValuesUpdate{Clear: []string{"x"}})
	e.wantValues("a")
	e.wantValues("b")
	e.create("c")
	e.valuesTurn("c", setValues("x", `3`))
	e.valuesTurn("a", &provider.ValuesUpdate{Replace: true})
	e.wantValues("c", "x=3")
}

func valuesWrittenByFirstTurn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetchInstance("a")
	ack := firstTurn(item)
	ack.Values = setValues("x", `1`)
	e.ack(item, ack)
	e.wantValues("a", "x=1")
}

func valuesKeptAfterCompletion(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.finish("a", provider.StatusCompleted, `"done"`)
	e.wantValues("a", "x=1")
}

func valuesSurviveContinueAsNew(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`, "y", `2`))
	e.continueAsNew("a")
	e.wantEqual(e.info("a").CurrentExecutionID, 2, "current execution")
	e.wantValues("a", "x=1", "y=2")
}

func valuesOverwrittenInLaterExecution(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`, "y", `2`))
	e.continueAsNew("a")
	u := setValues("x", `10`)
	u.Clear = []string{"y"}
	e.valuesTurn("a", u)
	e.wantValues("a", "x=10")
}

func valuesPruningKeeps(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("first", `1`))
	e.continueAsNew("a")
	e.valuesTurn("a", setValues("second", `2`))
	e.continueAsNew("a")
	res, err := e.a.PruneExecutions(e.ctx, provider.PruneRequest{Instance: "a", Options: provider.PruneOptions{KeepLast: 1}})
	e.must(err, "prune")
	e.wantEqual(res.ExecutionsDeleted, 2, "executions pruned")
	e.wantValues("a", "first=1", "second=2")
}

func valuesDeletedWithInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.create("b")
	e.valuesTurn("a", setValues("x", `1`))
	e.valuesTurn("b", setValues("x", `2`))
	e.finish("a", provider.StatusCompleted, `"done"`)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}})
	e.must(err, "delete a")
	_, err = e.p.ReadValues(e.ctx, provider.ValuesRequest{Instance: "a"})
	e.wantErr(err, provider.ErrNotFound, "values of the deleted instance")
	e.wantValues("b", "x=2")
	// A new instance of the ID starts with none.
	e.create("a")
	e.wantValues("a")
}

func valuesDeletedWithTree(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("root")
	e.createChild("child", "root")
	e.valuesTurn("root", setValues("r", `1`))
	e.valuesTurn("child", setValues("c", `2`))
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"root"}, Force: true})
	e.must(err, "delete the tree")
	e.create("child")
	e.wantValues("child")
}

func valuesBulkDelete(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"a", "b"} {
		e.create(id)
		e.valuesTurn(id, setValues("x", `1`))
		e.finish(id, provider.StatusCompleted, `"done"`)
	}
	_, err := e.a.DeleteInstancesBulk(e.ctx, provider.DeleteFilter{Instances: []string{"a", "b"}})
	e.must(err, "bulk delete")
	e.create("a")
	e.wantValues("a")
}

func valuesIDReuseStartsEmpty(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.finish("a", provider.StatusCompleted, `"done"`)
	e.must(Start(e.ctx, e.p, startItem("a"), nil, provider.IDReuseAllowFinished), "start a again")
	item := e.fetchInstance("a")
	e.ack(item, firstTurn(item))
	e.wantValues("a")
}

func valuesRolledBackWithFailedAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	dup := provider.Event{ID: 1, Kind: provider.EventExternalRaised, Time: time.Now().UnixMilli()}
	err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{dup}, Values: &provider.ValuesUpdate{Replace: true, Set: map[string]string{"y": `2`}}})
	e.wantErr(err, provider.ErrDuplicateEvent, "an ack repeating an event")
	e.wantValues("a", "x=1")
}

func valuesNotWrittenWithLostLock(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}, Values: setValues("x", `1`)})
	e.wantErr(err, provider.ErrLockNotHeld, "an ack after the lock lapsed")
	e.wantValues("a")
}

func valuesNotWrittenOnAbandon(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	e.wantValues("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.wantValues("a", "x=1")
}

// A turn for an instance never started (its messages are dropped) writes
// no value: there is no instance to own it.
func valuesNoStartNoValues(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(externalItem("ghost", "tick"))
	item := e.fetch()
	err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: 1, Values: setValues("x", `1`)})
	e.wantErr(err, provider.ErrInvalidArgument, "values from a turn of an instance never started")
	_, err = e.p.ReadValues(e.ctx, provider.ValuesRequest{Instance: "ghost"})
	e.wantErr(err, provider.ErrNotFound, "values of the instance never started")
}

func valuesReadWhileLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.valuesTurn("a", setValues("x", `1`))
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	e.wantValues("a", "x=1")
	e.ack(item, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}, Values: setValues("x", `2`)})
	e.wantValues("a", "x=2")
}

func valuesKeysWithAnyCharacters(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	keys := []string{"with space", "quote'\"", "slash/back\\", "ünïcödé ✓", "semi;colon--", "%_like", strings.Repeat("k", provider.MaxValueKeyBytes)}
	u := &provider.ValuesUpdate{Set: map[string]string{}}
	for i, k := range keys {
		u.Set[k] = fmt.Sprint(i)
	}
	e.valuesTurn("a", u)
	got := e.values("a")
	for i, k := range keys {
		e.wantEqual(got[k], fmt.Sprint(i), "value of key "+k)
	}
	e.wantEqual(pairs(e.values("a", "%_like")), []string{"%_like=5"}, "a key read alone is matched exactly")
}

func valuesRoundTrip(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	docs := []string{`null`, `""`, `0`, `-1.5e3`, `true`, `[]`, `{}`, `"ünïcödé \"quoted\" \u0000"`, `{"b":[1,{"c":null}],"a":"x"}`}
	u := &provider.ValuesUpdate{Set: map[string]string{}}
	for i, d := range docs {
		u.Set[fmt.Sprint("k", i)] = d
	}
	e.valuesTurn("a", u)
	got := e.values("a")
	for i, d := range docs {
		e.wantEqual(got[fmt.Sprint("k", i)], d, "value read back")
	}
}

func valuesLargestAccepted(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	big := `"` + strings.Repeat("x", provider.MaxValueBytes-2) + `"`
	e.valuesTurn("a", setValues("big", big))
	e.wantEqual(len(e.values("a")["big"]), provider.MaxValueBytes, "bytes of the largest value")
}

// refusedValues acks a turn of a with u and wants ErrInvalidArgument and
// nothing written.
func (e *env) refusedValues(u *provider.ValuesUpdate, what string) {
	e.t.Helper()
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}, Values: u})
	e.wantErr(err, provider.ErrInvalidArgument, what)
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true}), "abandon")
	e.wantValues("a", "kept=1")
	e.wantEqual(len(e.history("a")), 2, "events of a after "+what)
}

func (e *env) createWithValue() {
	e.t.Helper()
	e.create("a")
	e.valuesTurn("a", setValues("kept", `1`))
}

func valuesOversizedRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createWithValue()
	e.refusedValues(setValues("big", `"`+strings.Repeat("x", provider.MaxValueBytes-1)+`"`), "a value over the limit")
}

func valuesInvalidKeysRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createWithValue()
	e.refusedValues(setValues("", `1`), "an empty key")
	e.refusedValues(setValues(strings.Repeat("k", provider.MaxValueKeyBytes+1), `1`), "a key over the limit")
	e.refusedValues(&provider.ValuesUpdate{Clear: []string{"\xff"}}, "a key that is not UTF-8")
}

func valuesNonJSONRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createWithValue()
	e.refusedValues(setValues("x", `not json`), "a value that is not JSON")
	e.refusedValues(setValues("x", ``), "an empty value")
}

func valuesSetAndClearRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createWithValue()
	u := setValues("x", `1`)
	u.Clear = []string{"x"}
	e.refusedValues(u, "a key both set and cleared")
}

// Turns of many instances committed together (a store may batch them)
// each write their own instance's values.
func valuesBatchedTurns(t *testing.T, f Factory) {
	e := newEnv(t, f)
	const n = 8
	var ids []string
	for i := range n {
		id := fmt.Sprint("i", i)
		ids = append(ids, id)
		e.create(id)
		e.enqueue(externalItem(id, "tick"))
	}
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: n, LockFor: longLock})
	e.must(err, "fetch")
	e.wantEqual(len(items), n, "turns fetched")
	var wg sync.WaitGroup
	for _, item := range items {
		wg.Go(func() {
			err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
				HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)},
				Values:       setValues("me", fmt.Sprintf("%q", item.Instance), "shared", `1`)})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		e.wantValues(id, fmt.Sprintf("me=%q", id), "shared=1")
	}
}

func valuesWithNextTurn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	e.enqueue(externalItem("a", "tock"))
	_, next, err := AckTurnNext(e.ctx, e.p, "a", item.LockToken, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}, Values: setValues("x", `1`)}, nil, 0, longLock)
	e.must(err, "ack locking the next turn")
	if next == nil {
		t.Fatal("no next turn")
	}
	e.wantValues("a", "x=1")
	e.ack(next, provider.OrchestrationAck{ExecutionID: next.ExecutionID,
		HistoryDelta: []provider.Event{event(next, 1, provider.EventExternalRaised)}, Values: &provider.ValuesUpdate{Clear: []string{"x"}}})
	e.wantValues("a")
}

func valuesByDirectStart(t *testing.T, f Factory) {
	e := newEnv(t, f)
	item := &provider.OrchestrationItem{Instance: "a", ExecutionID: 1, OrchestrationName: orchName, Version: "1.0.0"}
	ack := firstTurn(item)
	ack.Values = setValues("x", `1`)
	created, _, err := CommitFirstTurn(e.ctx, e.p, "a", ack, nil, 0)
	e.must(err, "direct start")
	e.wantEqual(created, true, "created")
	e.wantValues("a", "x=1")
}
