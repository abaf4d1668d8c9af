package ui

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
)

// storeListed is how many pending and stalled instances the store page names.
const storeListed = 10

// workersWithin is how recently a worker announced itself to count as live.
const workersWithin = time.Minute

type storeData struct {
	Title   string
	Metrics provider.SystemMetrics
	Queues  provider.QueueDepths
	Stalled []listRow
	Pending []listRow
	// MoreStalled and MorePending say the lists were cut at storeListed.
	MoreStalled, MorePending bool
	Workers                  []workerRow
}

type workerRow struct {
	ID             string
	LastSeen       time.Time
	Orchestrations []string
	Activities     []string
}

func (s *server) storePage(w http.ResponseWriter, r *http.Request) {
	d := storeData{Title: "Store"}
	var err error
	ctx := r.Context()
	if d.Metrics, err = s.store.GetSystemMetrics(ctx); err != nil {
		s.fail(w, fmt.Errorf("instance counts: %w", err))
		return
	}
	if d.Queues, err = s.store.GetQueueDepths(ctx); err != nil {
		s.fail(w, fmt.Errorf("queue depths: %w", err))
		return
	}
	if d.Stalled, d.MoreStalled, err = s.firstOf(ctx, provider.StatusStalled); err != nil {
		s.fail(w, err)
		return
	}
	if d.Pending, d.MorePending, err = s.firstOf(ctx, provider.StatusPending); err != nil {
		s.fail(w, err)
		return
	}
	workers, err := s.store.ListWorkers(ctx, provider.ListWorkersRequest{Within: workersWithin})
	if err != nil {
		s.fail(w, fmt.Errorf("workers: %w", err))
		return
	}
	for _, wi := range workers {
		d.Workers = append(d.Workers, workerRow{ID: wi.ID, LastSeen: wi.LastSeen, Orchestrations: inspect.Registered(wi.Orchestrations), Activities: wi.Activities})
	}
	s.render(w, http.StatusOK, "store", d)
}

// firstOf lists the newest storeListed instances in status, and whether
// there are more.
func (s *server) firstOf(ctx context.Context, status provider.ExecutionStatus) ([]listRow, bool, error) {
	page, err := s.client.List(ctx, provider.ListRequest{Status: status, Limit: storeListed})
	if err != nil {
		return nil, false, fmt.Errorf("%s instances: %w", status, err)
	}
	rows := make([]listRow, 0, len(page.Instances))
	for _, i := range page.Instances {
		rows = append(rows, rowOf(i))
	}
	return rows, page.Next != "", nil
}
