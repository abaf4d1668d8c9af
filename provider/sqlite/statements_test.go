package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// TestStatementsPreparedOnce: a statement is prepared after the first
// transaction that runs it and reused by the next, on an in-memory store
// (one connection) as on a file.
func TestStatementsPreparedOnce(t *testing.T) {
	for _, name := range []string{"memory", "file"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			var p *Provider
			var err error
			if name == "memory" {
				p, err = OpenMemory(ctx, Options{})
			} else {
				p, err = Open(ctx, t.TempDir()+"/s.db", Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			start := func(id string) {
				item := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: id, Name: "O", ExecutionID: 1}
				if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: item}); err != nil {
					t.Fatal(err)
				}
			}
			start("a")
			prepared := len(p.stmts.prepared)
			if prepared == 0 {
				t.Fatal("no statement prepared after the first enqueue")
			}
			start("b")
			if got := len(p.stmts.prepared); got != prepared || len(p.stmts.wanted) != 0 {
				t.Fatalf("second enqueue: %d prepared (%d wanted), want the first's %d and none wanted", got, len(p.stmts.wanted), prepared)
			}
			item, err := provider.FetchOne(ctx, p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
			if err != nil || item == nil || item.Instance != "a" {
				t.Fatalf("fetch through prepared statements: %+v %v", item, err)
			}
		})
	}
}
