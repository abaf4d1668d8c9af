package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

type report struct {
	runs, completed, lost, wrong   int
	duplicateResults, missing      int
	executions, duplicateExecution int
	queued                         int64
	kills, restarts                int
	drain, total                   time.Duration
}

// ok: nothing lost, wrong or recorded twice, the queues empty, and faults
// were injected (a run without any proves nothing).
func (r report) ok() bool {
	return r.lost == 0 && r.wrong == 0 && r.duplicateResults == 0 && r.missing == 0 && r.queued == 0 && r.kills > 0
}

func (r report) print(cfg config, finished bool) {
	fmt.Printf("RESULT chaos store=%s orchestrations=%d workers=%d kills=%d pg_restarts=%d completed=%d lost=%d wrong=%d "+
		"duplicate_results=%d missing_results=%d executions=%d duplicate_executions=%d queued_after=%d drain_s=%.1f total_s=%.1f finished=%v\n",
		cfg.store, r.runs, cfg.workers, r.kills, r.restarts, r.completed, r.lost, r.wrong, r.duplicateResults, r.missing,
		r.executions, r.duplicateExecution, r.queued, r.drain.Seconds(), r.total.Seconds(), finished)
}

// check reads every instance, its history and the workers' execution logs.
func check(ctx context.Context, cfg config, client *runtime.Client, store provider.Provider, ids []string) (report, error) {
	r := report{runs: len(ids)}
	for _, id := range ids {
		st, err := client.Status(ctx, id)
		if err != nil || st.Status != runtime.StatusCompleted {
			r.lost++
			continue
		}
		r.completed++
		var out string
		if err := st.DecodeOutput(&out); err != nil || out != wantOutput(id) {
			r.wrong++
		}
		history, err := client.History(ctx, id)
		if err != nil {
			return r, fmt.Errorf("history of %s: %w", id, err)
		}
		results := map[int64]int{}
		for _, e := range history {
			if e.Kind == provider.EventActivityCompleted || e.Kind == provider.EventActivityFailed {
				results[e.SourceID]++
			}
		}
		for _, n := range results {
			if n > 1 {
				r.duplicateResults += n - 1
			}
		}
		r.missing += max(stepsPerRun-len(results), 0)
	}
	q, err := store.GetQueueDepths(ctx)
	if err != nil {
		return r, fmt.Errorf("queue depths: %w", err)
	}
	r.queued = q.Orchestrator + q.Worker + q.Delayed
	execs, err := countExecutions(cfg.dir)
	if err != nil {
		return r, err
	}
	r.executions = execs
	r.duplicateExecution = max(execs-len(ids)*stepsPerRun, 0)
	return r, nil
}

// countExecutions counts the activity executions the workers logged.
func countExecutions(dir string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "executions-*.log"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) != "" {
				n++
			}
		}
		f.Close()
	}
	return n, nil
}
