package ui

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// maxTreeNodes bounds the instances the page reads for its tree.
const maxTreeNodes = 200

type instanceData struct {
	Title  string
	Status *runtime.Status
	// Shown is the status as people read it (Stalled for a stalled instance).
	Shown string
	// Execution is the execution shown; Executions, every one of the instance.
	Execution  int64
	Executions []int64
	Input      string
	Parents    []string // the parent, its parent, … up to the root
	Tree       *inspect.Node
	TreeCut    bool
	WaitingOn  []string
	Timeline   timelineView
	History    []historyRow
	Actions    []string // what can be done to it now, when actions are on
	// Done says what the action just taken did.
	Done string
}

type historyRow struct {
	Offset, Kind, Name, Took, Detail string
	ID, Source                       int64
	Failed                           bool
}

func (s *server) instancePage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		s.fail(w, badRequestf("which instance? the page needs ?id="))
		return
	}
	data, err := s.readInstance(r.Context(), id, r.URL.Query().Get("execution"))
	if err != nil {
		s.fail(w, fmt.Errorf("instance %s: %w", id, err))
		return
	}
	data.Done = r.URL.Query().Get("done")
	s.render(w, http.StatusOK, "instance", data)
}

func (s *server) readInstance(ctx context.Context, id, execution string) (*instanceData, error) {
	st, err := s.client.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &instanceData{Title: id, Status: st, Shown: string(st.Status), Execution: st.ExecutionID}
	if st.Stalled() {
		d.Shown = string(provider.StatusStalled)
	}
	if execution != "" {
		if d.Execution, err = strconv.ParseInt(execution, 10, 64); err != nil || d.Execution < 1 {
			return nil, badRequestf("execution %q is not an execution number", execution)
		}
	}
	if d.Executions, err = s.store.ListExecutions(ctx, provider.InstanceRequest{Instance: id}); err != nil {
		return nil, fmt.Errorf("executions: %w", err)
	}
	if err := s.readExecution(ctx, d); err != nil {
		return nil, err
	}
	if d.Parents, err = s.parents(ctx, st.ParentInstance); err != nil {
		return nil, err
	}
	if d.Tree, d.TreeCut, err = inspect.Tree(ctx, s.client, s.store, id, maxTreeNodes); err != nil {
		return nil, fmt.Errorf("tree: %w", err)
	}
	d.Actions = availableActions(st)
	return d, nil
}

// readExecution fills in d's history, timeline, input and pending work;
// a pending instance has no history yet.
func (s *server) readExecution(ctx context.Context, d *instanceData) error {
	if d.Status.Status == runtime.StatusPending {
		return nil
	}
	events, err := s.store.ReadHistory(ctx, provider.ExecutionRequest{Instance: d.Status.Instance, ExecutionID: d.Execution})
	if err != nil {
		return fmt.Errorf("history of execution %d: %w", d.Execution, err)
	}
	now := s.opts.Now()
	d.History = historyRows(events)
	d.Timeline = layoutTimeline(inspect.BuildTimeline(events, now))
	if len(events) > 0 && events[0].Kind == provider.EventOrchestrationStarted {
		d.Input = events[0].Input
	}
	if d.Execution == d.Status.ExecutionID && !d.Status.Finished() {
		for _, p := range inspect.WaitingOn(events) {
			d.WaitingOn = append(d.WaitingOn, p.Describe(now))
		}
	}
	return nil
}

// parents walks up from parent to the root, at most maxTreeNodes steps.
func (s *server) parents(ctx context.Context, parent string) ([]string, error) {
	var chain []string
	for parent != "" && len(chain) < maxTreeNodes {
		chain = append([]string{parent}, chain...)
		st, err := s.client.Status(ctx, parent)
		if err != nil {
			return nil, fmt.Errorf("parent %s: %w", parent, err)
		}
		parent = st.ParentInstance
	}
	return chain, nil
}

// historyRows is the history table: times from the execution's start,
// names and durations on completions, timers by purpose.
func historyRows(events []provider.Event) []historyRow {
	byID := make(map[int64]provider.Event, len(events))
	rows := make([]historyRow, 0, len(events))
	var start int64
	for _, e := range events {
		byID[e.ID] = e
		if start == 0 {
			start = e.Time
		}
		row := historyRow{ID: e.ID, Kind: string(e.Kind), Name: e.Name, Source: e.SourceID, Detail: inspect.Detail(e, 300),
			Failed: e.Error != nil}
		if e.Time != 0 && start != 0 {
			row.Offset = "+" + inspect.ShortDuration(time.Duration(e.Time-start)*time.Millisecond)
		}
		if src, ok := byID[e.SourceID]; ok && e.SourceID != 0 {
			if row.Name == "" {
				row.Name = src.Name
			}
			if inspect.IsCompletion(e.Kind) && e.Time != 0 && src.Time != 0 {
				row.Took = inspect.ShortDuration(time.Duration(e.Time-src.Time) * time.Millisecond)
			}
		}
		switch e.Kind {
		case provider.EventTimerCreated:
			row.Name = inspect.TimerPurpose(e)
		case provider.EventTimerFired:
			row.Name = inspect.TimerPurpose(byID[e.SourceID])
		}
		rows = append(rows, row)
	}
	return rows
}
