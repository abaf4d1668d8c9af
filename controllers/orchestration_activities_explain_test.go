package controllers

import (
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// The oldest activity past the grace that no live worker runs is the one
// explained, by the cause: no live worker, none registering it, or none
// taking its tag; leased ones and ones a live worker runs are left alone.
func TestUnservedActivityExplained(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	old, young := now.Add(-time.Minute), now.Add(-2*time.Second)
	plain := provider.WorkerInfo{ID: "w-1", Activities: []string{"Greet", "RenderFrame"}}
	gpu := provider.WorkerInfo{ID: "g-1", Activities: []string{"RenderFrame"}, Tags: provider.TagFilter{Tags: []string{"gpu"}}}
	render := provider.QueuedActivity{ActivityID: 3, Name: "RenderFrame", Tag: "gpu", Queued: old}
	cases := []struct {
		name      string
		queued    []provider.QueuedActivity
		workers   []provider.WorkerInfo
		reason    string // "" = none unserved
		want      []string
		wantYoung time.Duration
	}{
		{name: "no worker takes the tag", queued: []provider.QueuedActivity{render}, workers: []provider.WorkerInfo{plain, plain},
			reason: reasonNoWorkerForTag, want: []string{`activity "RenderFrame" with tag "gpu", queued at 2026-05-01T11:59:00Z, waits: `,
				`no live worker of the store of pool p takes tag "gpu". The 2 that register it take untagged activities only (2 workers).`,
				"spec.activityTags [gpu]"}},
		{name: "nobody registers it", queued: []provider.QueuedActivity{{Name: "Upload", Queued: old}, {Name: "Upload", Queued: old}},
			workers: []provider.WorkerInfo{plain, gpu}, reason: reasonActivityNotRegistered,
			want: []string{`activity "Upload" (untagged)`, "waits (as does 1 other activity of the instance): ", "none of the 2 live workers",
				"They register Greet, RenderFrame.", "They take tags gpu (1 worker); untagged activities only (1 worker)."}},
		{name: "no live worker", queued: []provider.QueuedActivity{render}, reason: reasonNoLiveWorkers,
			want: []string{"no worker of the store of pool p has announced itself in the last 1m0s"}},
		{name: "served by a worker taking the tag", queued: []provider.QueuedActivity{render}, workers: []provider.WorkerInfo{plain, gpu}},
		{name: "leased", queued: []provider.QueuedActivity{{Name: "RenderFrame", Tag: "gpu", Queued: old, Leased: true}}, workers: []provider.WorkerInfo{plain}},
		{name: "within the grace", queued: []provider.QueuedActivity{{Name: "RenderFrame", Tag: "gpu", Queued: young}},
			workers: []provider.WorkerInfo{plain}, wantYoung: pendingGrace - 2*time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			unserved, others, wait := findUnserved(c.queued, c.workers, now)
			if wait != c.wantYoung {
				t.Errorf("next look in %s, want %s", wait, c.wantYoung)
			}
			if c.reason == "" {
				if unserved != nil {
					t.Fatalf("reported %+v", *unserved)
				}
				return
			}
			if unserved == nil {
				t.Fatal("nothing reported")
			}
			reason, msg := explainUnserved("p", *unserved, others, c.workers)
			if reason != c.reason {
				t.Errorf("reason %s, want %s (%s)", reason, c.reason, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			t.Log(msg)
		})
	}
}
