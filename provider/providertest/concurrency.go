package providertest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Contention shape: at least 8 goroutines over at least 500 items, so that
// `go test -race` proves nothing is processed twice and nothing is lost.
const (
	contenders     = 8
	contendedItems = 500
	contentionTime = 3 * time.Minute
)

func concurrencyCases() []Case {
	return []Case{
		{Name: "OrchestrationTurnsOnOneHandle", Run: func(t *testing.T, f Factory) { orchestrationContention(t, f, false) }},
		{Name: "OrchestrationTurnsAcrossHandles", Run: func(t *testing.T, f Factory) { orchestrationContention(t, f, true) }},
		{Name: "WorkItemsOnOneHandle", Run: func(t *testing.T, f Factory) { workerContention(t, f, false) }},
		{Name: "WorkItemsAcrossHandles", Run: func(t *testing.T, f Factory) { workerContention(t, f, true) }},
	}
}

// handles returns the providers the contenders use: the same one for all, or
// one per contender on the same store, as separate processes would have.
func handles(e *env, separate bool) []provider.Provider {
	out := make([]provider.Provider, contenders)
	for i := range out {
		out[i] = e.p
		if separate && i > 0 {
			out[i] = e.f.OpenPeer(e.t, e.p)
		}
	}
	return out
}

// orchestrationContention runs contendedItems instances of three messages each:
// Start, then "step" (enqueued by the first turn), plus "late", enqueued by a
// producer while turns are running. Every message must be processed exactly
// once and every instance must end with exactly one event per message.
func orchestrationContention(t *testing.T, f Factory, separate bool) {
	e := newEnv(t, f)
	for i := range contendedItems {
		e.enqueue(startItem(fmt.Sprintf("c%03d", i)))
	}
	var processed sync.Map // "instance/message" -> *atomic.Int32
	var total atomic.Int32
	var wg sync.WaitGroup
	deadline := time.Now().Add(contentionTime)
	for i, p := range handles(e, separate) {
		wg.Go(func() {
			for total.Load() < 3*contendedItems && time.Now().Before(deadline) && !t.Failed() {
				items, err := p.Fetch(e.ctx, provider.FetchRequest{Max: 1 + i%3, LockFor: longLock, PollFor: 20 * time.Millisecond})
				if err != nil {
					t.Errorf("fetch: %v", err)
					return
				}
				for _, item := range items {
					if err := AckTurn(e.ctx, p, item.LockToken, contendedTurn(item)); err != nil {
						t.Errorf("ack %s: %v", item.Instance, err)
						return
					}
					for _, m := range item.Messages {
						c, _ := processed.LoadOrStore(item.Instance+"/"+messageName(m), new(atomic.Int32))
						c.(*atomic.Int32).Add(1)
						total.Add(1)
					}
				}
			}
		})
	}
	wg.Go(func() { // the producer of late messages
		for i := range contendedItems {
			if err := e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: externalItem(fmt.Sprintf("c%03d", i), "late")}); err != nil {
				t.Errorf("enqueue late: %v", err)
				return
			}
		}
	})
	wg.Wait()
	if t.Failed() {
		return
	}
	e.wantEqual(total.Load(), 3*contendedItems, "messages processed")
	processed.Range(func(k, v any) bool {
		if n := v.(*atomic.Int32).Load(); n != 1 {
			t.Errorf("message %s processed %d times", k, n)
		}
		return true
	})
	for i := range contendedItems {
		id := fmt.Sprintf("c%03d", i)
		e.wantEqual(eventIDs(e.history(id)), []int64{1, 2, 3}, "history of "+id)
		e.wantEqual(e.info(id).Status, provider.StatusCompleted, "status of "+id)
	}
	e.wantEqual(e.depths(), provider.QueueDepths{}, "queue depths at the end")
}

func messageName(m provider.WorkItem) string {
	if m.Kind == provider.WorkStartOrchestration {
		return "start"
	}
	return m.Name
}

// contendedTurn records one event per message; the Start turn creates the
// instance and sends it "step"; the "step" turn completes it.
func contendedTurn(item *provider.OrchestrationItem) provider.OrchestrationAck {
	ack := provider.OrchestrationAck{ExecutionID: item.ExecutionID}
	for i, m := range item.Messages {
		ack.HistoryDelta = append(ack.HistoryDelta, provider.Event{ID: int64(len(item.History) + i + 1), Kind: provider.EventExternalRaised, Name: messageName(m)})
		switch messageName(m) {
		case "start":
			ack.Metadata.OrchestrationName = orchName
			ack.OrchestratorItems = append(ack.OrchestratorItems, externalItem(item.Instance, "step"))
		case "step":
			ack.Metadata.Status, ack.Metadata.Output = provider.StatusCompleted, `"ok"`
		}
	}
	return ack
}

// workerContention runs contendedItems activities through contenders
// goroutines; each must be acked exactly once and yield exactly one completion.
func workerContention(t *testing.T, f Factory, separate bool) {
	e := newEnv(t, f)
	for i := range contendedItems {
		e.enqueueWork(activityItem("w", 1, int64(i+1)))
	}
	var mu sync.Mutex
	acked := map[int64]int{}
	var wg sync.WaitGroup
	deadline := time.Now().Add(contentionTime)
	for _, p := range handles(e, separate) {
		wg.Go(func() {
			for time.Now().Before(deadline) && !t.Failed() {
				lease, err := p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock})
				if err != nil {
					t.Errorf("fetch work: %v", err)
					return
				}
				if lease == nil {
					return
				}
				if err := AckActivity(e.ctx, p, lease.LockToken, completionItem("w", 1, lease.Item.ID)); err != nil {
					t.Errorf("ack work %d: %v", lease.Item.ID, err)
					return
				}
				mu.Lock()
				acked[lease.Item.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	e.wantEqual(len(acked), contendedItems, "distinct activities acked")
	for id, n := range acked {
		if n != 1 {
			t.Errorf("activity %d acked %d times", id, n)
		}
	}
	item := e.fetch()
	ids := make([]int64, 0, len(item.Messages))
	for _, m := range item.Messages {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	e.wantEqual(len(ids), contendedItems, "completions delivered")
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("completion %d has activity ID %d: an activity is missing or doubled", i, id)
		}
	}
}
