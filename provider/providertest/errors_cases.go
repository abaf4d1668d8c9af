package providertest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func errorCases() []Case {
	return []Case{
		{Name: "AckWithUnknownTokenRejected", Run: ackUnknownToken},
		{Name: "RenewWithUnknownTokenRejected", Run: renewUnknownToken},
		{Name: "AbandonWithUnknownTokenRejected", Run: abandonUnknownToken},
		{Name: "WorkerAckWithUnknownTokenRejected", Run: workerAckUnknownToken},
		{Name: "WorkerRenewWithUnknownTokenRejected", Run: workerRenewUnknownToken},
		{Name: "WorkerAbandonWithUnknownTokenRejected", Run: workerAbandonUnknownToken},
		{Name: "DuplicateEventIDAcrossTurnsRejected", Run: duplicateEventAcrossTurns},
		{Name: "DuplicateEventIDWithinDeltaRejected", Run: duplicateEventWithinDelta},
		{Name: "LockErrorsAreTypedAndPermanent", Run: lockErrorsTyped},
		{Name: "CorruptHistoryReportedWithInstance", Run: corruptHistoryReported},
		{Name: "CorruptHistoryCountsTowardPoisonLimit", Run: corruptHistoryCountsAttempts},
		{Name: "CorruptOrchestratorMessageReported", Run: corruptOrchestratorMessage},
		{Name: "CorruptWorkItemReported", Run: corruptWorkItem},
		{Name: "InvalidWorkItemsRejected", Run: invalidWorkItemsRejected},
		{Name: "InvalidTimeoutsRejected", Run: invalidTimeoutsRejected},
		{Name: "FirstTurnWithoutNameRejected", Run: firstTurnWithoutName},
		{Name: "ZeroValueInputsDoNotPanic", Run: zeroValueInputs},
		{Name: "CommitOfUnlistedCombinationWritesNothing", Run: commitUnlistedCombination},
	}
}

// commitUnlistedCombination: a commit request combining what
// provider.CommitRequest does not list gets ErrInvalidArgument and writes
// nothing; the turn and the activity it names are still held and commit
// afterwards.
func commitUnlistedCombination(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.enqueue(externalItem("a", "go"))
	item := e.fetch()
	before := int64(len(e.history("a")))
	result := completionItem("a", 1, 2)
	turn := &provider.TurnCommit{Hold: provider.TurnLocked, Instance: "a", LockToken: item.LockToken, Ack: provider.OrchestrationAck{ExecutionID: 1}}
	for what, req := range map[string]provider.CommitRequest{
		"nothing":                      {},
		"a locked turn with a result":  {Turn: turn, Activity: &provider.ActivityResult{LockToken: lease.LockToken, Result: result}},
		"a turn with no hold":          {Turn: &provider.TurnCommit{LockToken: item.LockToken}},
		"a quiet result, next":         {Activity: &provider.ActivityResult{LockToken: lease.LockToken, Result: result, QuietAfter: 2}, LockNextFor: longLock},
		"a removal, next":              {Activity: &provider.ActivityResult{LockToken: lease.LockToken}, LockNextFor: longLock},
		"a cached turn with no turn":   {Turn: &provider.TurnCommit{Hold: provider.TurnCached}},
		"a new instance with a result": {Turn: &provider.TurnCommit{Hold: provider.TurnNew, Instance: "b"}, Activity: &provider.ActivityResult{LockToken: lease.LockToken, Result: result}},
	} {
		c, err := e.p.Commit(e.ctx, req)
		e.wantErr(err, provider.ErrInvalidArgument, what)
		if len(c.Leases) != 0 || c.Next != nil || c.Created || c.Quiet {
			t.Errorf("%s: reported %+v", what, c)
		}
	}
	e.wantEqual(int64(len(e.history("a"))), before, "a's history after refused commits")
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, result), "the activity's result after refused commits")
	e.must(AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{{ID: before + 1, Kind: provider.EventExternalRaised, Name: "go"}}}), "the turn after refused commits")
}

func ackUnknownToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	err := AckTurn(e.ctx, e.p, "no-such-token", provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted}},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: orchName}})
	e.wantErr(err, provider.ErrLockNotHeld, "ack with unknown token")
	e.wantEqual(e.exists("a"), false, "instance created by rejected ack")
	e.wantEqual(e.fetch().Instance, "a", "message still queued")
}

func renewUnknownToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.wantErr(e.p.RenewOrchestrationItemLock(e.ctx, provider.RenewRequest{LockToken: "no-such-token", ExtendFor: time.Minute}), provider.ErrLockNotHeld, "renew with unknown token")
}

func abandonUnknownToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.wantErr(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: "no-such-token"}), provider.ErrLockNotHeld, "abandon with unknown token")
	e.fetchNone() // the real holder's lock is untouched
	e.ack(item, firstTurn(item))
}

func workerAckUnknownToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	e.wantErr(AckActivity(e.ctx, e.p, "no-such-token", completionItem("a", 1, 1)), provider.ErrLockNotHeld, "worker ack with unknown token")
	e.wantEqual(e.depths().Orchestrator, 0, "completions enqueued by rejected ack")
	e.wantEqual(e.fetchWork().Item.ID, 1, "work item still queued")
}

func workerRenewUnknownToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: "no-such-token", ExtendFor: time.Minute})
	e.wantErr(err, provider.ErrLockNotHeld, "worker renew with unknown token")
}

func workerAbandonUnknownToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWork()
	e.wantErr(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: "no-such-token"}), provider.ErrLockNotHeld, "worker abandon with unknown token")
	e.fetchWorkNone()
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack by the real holder")
}

func duplicateEventAcrossTurns(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "go"))
	item := e.fetch()
	err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventExternalRaised}}})
	e.wantErr(err, provider.ErrDuplicateEvent, "ack re-using event ID 1")
	e.wantEqual(e.history("a")[0].Kind, provider.EventOrchestrationStarted, "event 1 after rejected ack")
}

func duplicateEventWithinDelta(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	ack := firstTurn(item)
	ack.HistoryDelta = append(ack.HistoryDelta, ack.HistoryDelta[0])
	e.wantErr(AckTurn(e.ctx, e.p, item.LockToken, ack), provider.ErrDuplicateEvent, "ack with one ID twice")
	e.wantEqual(e.exists("a"), false, "instance created by rejected ack")
}

func lockErrorsTyped(t *testing.T, f Factory) {
	e := newEnv(t, f)
	err := AckTurn(e.ctx, e.p, "stale", provider.OrchestrationAck{ExecutionID: 1})
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("ack with stale token: error %T %v is not a *provider.Error", err, err)
	}
	if provider.IsRetryable(err) {
		t.Fatalf("ack with stale token: %v is marked retryable; a lost lock never comes back", err)
	}
	e.wantErr(err, provider.ErrLockNotHeld, "ack with stale token")
}

func corruptHistoryReported(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("broken-instance")
	e.f.CorruptHistoryEvent(t, e.p, "broken-instance", 1, 1)
	e.enqueue(externalItem("broken-instance", "go"))
	item := e.fetch()
	if item.DecodeError == nil || !errors.Is(item.DecodeError, provider.ErrCorruptData) {
		t.Fatalf("fetch of corrupt history: DecodeError = %v, want ErrCorruptData", item.DecodeError)
	}
	if !strings.Contains(item.DecodeError.Error(), "broken-instance") {
		t.Fatalf("decode error %q does not name the instance", item.DecodeError)
	}
	_, err := e.p.ReadHistory(e.ctx, provider.ExecutionRequest{Instance: "broken-instance"})
	e.wantErr(err, provider.ErrCorruptData, "read corrupt history")
	if !strings.Contains(err.Error(), "broken-instance") {
		t.Fatalf("read error %q does not name the instance", err)
	}
}

func corruptHistoryCountsAttempts(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.f.CorruptHistoryEvent(t, e.p, "a", 1, 1)
	e.enqueue(externalItem("a", "go"))
	for want := 1; want <= 3; want++ {
		item := e.fetch()
		if item.DecodeError == nil {
			t.Fatal("fetch of corrupt history: no DecodeError")
		}
		e.wantEqual(item.AttemptCount, want, "attempt count")
		e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	}
}

func corruptOrchestratorMessage(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "bad"))
	e.f.CorruptOrchestratorMessages(t, e.p, "a")
	e.enqueue(externalItem("a", "good"))
	item := e.fetch()
	if !errors.Is(item.DecodeError, provider.ErrCorruptData) || !strings.Contains(item.DecodeError.Error(), `"a"`) {
		t.Fatalf("DecodeError = %v, want ErrCorruptData naming instance \"a\"", item.DecodeError)
	}
	e.wantEqual(len(item.Messages), 1, "decodable messages returned")
	e.wantEqual(item.Messages[0].Name, "good", "decodable message")
	e.wantEqual(item.AttemptCount, 1, "attempt count")
	// Acking drops the corrupt message with the rest of the batch.
	e.ack(item, provider.OrchestrationAck{ExecutionID: 1})
	e.fetchNone()
}

func corruptWorkItem(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	e.f.CorruptWorkItems(t, e.p, "a")
	lease := e.fetchWork()
	if !errors.Is(lease.DecodeError, provider.ErrCorruptData) || !strings.Contains(lease.DecodeError.Error(), `"a"`) {
		t.Fatalf("DecodeError = %v, want ErrCorruptData naming instance \"a\"", lease.DecodeError)
	}
	e.wantEqual(lease.Item.Instance, "a", "instance of corrupt item")
	e.wantEqual(lease.Item.ID, 2, "activity ID of corrupt item")
	e.wantEqual(lease.AttemptCount, 1, "attempt count")
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken}), "abandon corrupt item")
	e.wantEqual(e.fetchWork().AttemptCount, 2, "attempt count on refetch")
}

func invalidWorkItemsRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	bad := []provider.WorkItem{
		{Kind: provider.WorkExternalRaised},                            // no instance
		{Kind: "NoSuchKind", Instance: "a"},                            // unknown kind
		{Kind: provider.WorkStartOrchestration, Instance: "a"},         // no orchestration name
		{Kind: provider.WorkActivityExecute, Instance: "a", Name: "x"}, // worker item on the orchestrator queue
	}
	for _, it := range bad {
		e.wantErr(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: it}), provider.ErrInvalidArgument, "enqueue "+string(it.Kind))
	}
	e.wantErr(e.p.EnqueueForWorker(e.ctx, provider.EnqueueRequest{Item: externalItem("a", "x")}), provider.ErrInvalidArgument, "orchestrator item on the worker queue")
	e.wantErr(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: startItem("a"), Delay: -time.Second}), provider.ErrInvalidArgument, "negative delay")
	e.wantEqual(e.depths(), provider.QueueDepths{}, "queue depths after rejected enqueues")
}

func invalidTimeoutsRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	_, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{})
	e.wantErr(err, provider.ErrInvalidArgument, "fetch with zero lock timeout")
	_, err = e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: time.Second, PollFor: -time.Second})
	e.wantErr(err, provider.ErrInvalidArgument, "fetch work with negative poll timeout")
	e.wantEqual(e.fetch().Instance, "a", "message untouched by rejected fetches")
}

func firstTurnWithoutName(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(externalItem("ghost", "x"))
	item := e.fetch()
	err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted}}})
	e.wantErr(err, provider.ErrInvalidArgument, "first turn without orchestration name")
	e.wantEqual(e.exists("ghost"), false, "instance created")
	e.ack(item, provider.OrchestrationAck{ExecutionID: 1}) // the lock was kept; an empty ack still works
}

// Every method called with zero values must return, not panic.
func zeroValueInputs(t *testing.T, f Factory) {
	e := newEnv(t, f)
	ctx, p, a := e.ctx, e.p, e.a
	calls := map[string]func() error{
		"Fetch": func() error { _, err := p.Fetch(ctx, provider.FetchRequest{}); return err },
		"Fetch by name": func() error {
			_, err := p.Fetch(ctx, provider.FetchRequest{Max: 1, Instance: "a"})
			return err
		},
		"Commit, a turn": func() error { return AckTurn(ctx, p, "", provider.OrchestrationAck{}) },
		"AbandonOrchestrationItem": func() error {
			return p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{})
		},
		"RenewOrchestrationItemLock": func() error { return p.RenewOrchestrationItemLock(ctx, provider.RenewRequest{}) },
		"FetchWorkItem":              func() error { _, err := p.FetchWorkItem(ctx, provider.FetchWorkRequest{}); return err },
		"Commit, a result":           func() error { return AckActivity(ctx, p, "", &provider.WorkItem{}) },
		"AbandonWorkItem":            func() error { return p.AbandonWorkItem(ctx, provider.AbandonRequest{}) },
		"RenewWorkItemLock":          func() error { _, err := p.RenewWorkItemLock(ctx, provider.RenewRequest{}); return err },
		"EnqueueForOrchestrator":     func() error { return p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: provider.WorkItem{}}) },
		"EnqueueForWorker":           func() error { return p.EnqueueForWorker(ctx, provider.EnqueueRequest{Item: provider.WorkItem{}}) },
		"AppendHistory":              func() error { return p.AppendHistory(ctx, provider.AppendRequest{Events: []provider.Event{{}}}) },
		"GetCustomStatus":            func() error { _, _, err := p.GetCustomStatus(ctx, provider.CustomStatusRequest{}); return err },
		"GetExecutionInfo":           func() error { _, err := a.GetExecutionInfo(ctx, provider.ExecutionRequest{}); return err },
		"GetParent":                  func() error { _, _, err := a.GetParent(ctx, provider.InstanceRequest{Instance: ""}); return err },
		"GetInstanceTree":            func() error { _, err := a.GetInstanceTree(ctx, provider.InstanceRequest{Instance: ""}); return err },
		"DeleteInstances": func() error {
			_, err := a.DeleteInstances(ctx, provider.DeleteRequest{Instances: []string{""}})
			return err
		},
		"PruneExecutions": func() error {
			_, err := a.PruneExecutions(ctx, provider.PruneRequest{Options: provider.PruneOptions{KeepLast: -1}})
			return err
		},
		"DeleteInstancesBulk": func() error {
			_, err := a.DeleteInstancesBulk(ctx, provider.DeleteFilter{Limit: -1})
			return err
		},
	}
	for name, call := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s with zero values panicked: %v", name, r)
				}
			}()
			if err := call(); err == nil {
				t.Errorf("%s with zero values: no error", name)
			}
		}()
	}
	e.wantEqual(e.depths(), provider.QueueDepths{}, "queue depths after zero-value calls")
}
