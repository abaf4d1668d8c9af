package sqlite

import (
	"strings"
	"testing"
)

// TestReadyScanReadsOnlyVisibleMessages: the look for ready instances walks
// the (visible_at, id) index in its order and stops at its limit: sleeping
// timers are never read and the visible backlog is not sorted. In id order
// SQLite sorted every visible message first (with a literal bound it scanned
// the whole queue instead: 100,000 sleeping timers cost 6 ms per look in the
// sqlite3 shell, against 0.1 ms on the index).
func TestReadyScanReadsOnlyVisibleMessages(t *testing.T) {
	p, err := Open(t.Context(), t.TempDir()+"/s.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rows, err := p.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+readyInstancesQuery, 1, 1, "[]", nil, nil, nil, nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(plan) == 0 || !strings.Contains(plan[0], "USING INDEX orchestrator_queue_visible (visible_at<?)") {
		t.Fatalf("the ready scan's plan starts with %q, want a search of orchestrator_queue_visible on visible_at (plan: %q)",
			first(plan), plan)
	}
	for _, step := range plan {
		if strings.Contains(step, "TEMP B-TREE") {
			t.Fatalf("the ready scan sorts (%q): it would read every visible message before its limit (plan: %q)", step, plan)
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
