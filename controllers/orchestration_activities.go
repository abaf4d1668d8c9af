package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
)

// condActivitiesServed says whether every activity the running instance
// queued has a live worker that runs it. It appears only once one has
// waited without one (False), turns True when they are served, and goes
// when the instance finishes.
const condActivitiesServed = "ActivitiesServed"

// Reasons of ActivitiesServed (and reasonNoLiveWorkers).
const (
	// ReasonNoWorkerForTag: live workers register the activity, but none
	// takes its tag (a WorkerPool's spec.activityTags).
	reasonNoWorkerForTag = "NoWorkerForTag"
	// ReasonActivityNotRegistered: no live worker registers the activity.
	reasonActivityNotRegistered = "ActivityNotRegistered"
	reasonServed                = "Served"
)

// explainQueuedActivities says in the ActivitiesServed condition when an
// activity of the running instance has waited longer than pendingGrace,
// unleased, and no live worker of the store runs its name with its tag. The
// store is read at most once per resync for an instance without the
// condition, however often it changes; with the condition False it is read
// on every reconcile, so it clears as soon as a worker runs the activity. It
// returns when to look again.
func (r *orchestrationReconciler) explainQueuedActivities(ctx context.Context, o *v1.Orchestration, store *poolStore) time.Duration {
	c := findCondition(o, condActivitiesServed)
	waiting := c != nil && c.Status == metav1.ConditionFalse
	now := time.Now()
	if wait := r.activityChecks.wait(o.UID, now); !waiting && wait > 0 {
		return wait
	}
	check, ok := checkActivities(ctx, store, o.Status.InstanceID, now)
	wait := r.Resync
	if check.young > 0 {
		wait = min(wait, check.young)
	}
	r.activityChecks.schedule(o.UID, now.Add(wait), now)
	switch {
	case !ok:
	case check.unserved == nil && waiting:
		setCondition(o, condActivitiesServed, metav1.ConditionTrue, reasonServed, "every queued activity has a live worker that runs it")
	case check.unserved != nil:
		reason, msg := explainUnserved(o.Spec.WorkerPool, *check.unserved, check.others, check.workers)
		if !waiting || c.Reason != reason {
			r.Recorder.Eventf(o, nil, "Warning", reason, "Activities", "%s", msg)
		}
		setCondition(o, condActivitiesServed, metav1.ConditionFalse, reason, msg)
	}
	return wait
}

// activityCheck is what one look at an instance's queued activities found.
type activityCheck struct {
	unserved *provider.QueuedActivity // the oldest waiting past the grace for a worker; nil: none
	others   int                      // how many more do
	young    time.Duration            // until the next one reaches the grace; 0: none will
	workers  []provider.WorkerInfo    // the store's live workers
}

// checkActivities reads the instance's queued activities and, when one is
// unleased, the store's live workers. ok is false when either cannot be
// read: then nothing can be said.
func checkActivities(ctx context.Context, store *poolStore, instance string, now time.Time) (check activityCheck, ok bool) {
	queued, err := store.provider.ListQueuedActivities(ctx, provider.InstanceRequest{Instance: instance})
	if err != nil {
		log.FromContext(ctx).V(1).Info("cannot read the instance's queued activities", "error", err.Error())
		return check, false
	}
	if !slices.ContainsFunc(queued, func(a provider.QueuedActivity) bool { return !a.Leased }) {
		return check, true // every one is running: no need for the announcements
	}
	if check.workers, ok = store.liveWorkers(ctx); !ok {
		return check, false
	}
	check.unserved, check.others, check.young = findUnserved(queued, check.workers, now)
	return check, true
}

// findUnserved returns the oldest activity that waited longer than
// pendingGrace, unleased, with no live worker running it, and how many more
// do. young is how long until the next one that no live worker runs reaches
// the grace (0: none).
func findUnserved(queued []provider.QueuedActivity, workers []provider.WorkerInfo, now time.Time) (unserved *provider.QueuedActivity, others int, young time.Duration) {
	for i, a := range queued {
		if a.Leased || anyRunsActivity(workers, a.Name, a.Tag) {
			continue
		}
		left := a.Queued.Add(pendingGrace).Sub(now)
		switch {
		case left > 0:
			if young == 0 || left < young {
				young = left
			}
		case unserved == nil:
			unserved = &queued[i]
		default:
			others++
		}
	}
	return unserved, others, young
}

func anyRunsActivity(workers []provider.WorkerInfo, name, tag string) bool {
	return slices.ContainsFunc(workers, func(w provider.WorkerInfo) bool { return w.RunsActivity(name, tag) })
}

// explainUnserved names the activity, its tag and what the live workers
// take. The message holds no times or counts of waiting, so it changes (and
// the status is written) only when the cause does.
func explainUnserved(pool string, a provider.QueuedActivity, others int, workers []provider.WorkerInfo) (reason, msg string) {
	what := fmt.Sprintf("activity %q %s, queued at %s, waits", a.Name, tagPhrase(a.Tag), a.Queued.UTC().Format(time.RFC3339))
	if others > 0 {
		what += fmt.Sprintf(" (as %s %d other %s of the instance)", plural(others, "does", "do"), others, plural(others, "activity", "activities"))
	}
	store := "the store of pool " + pool
	registering := slices.DeleteFunc(slices.Clone(workers), func(w provider.WorkerInfo) bool { return !slices.Contains(w.Activities, a.Name) })
	switch {
	case len(workers) == 0:
		return reasonNoLiveWorkers, fmt.Sprintf("%s: no worker of %s has announced itself in the last %s", what, store, liveWorkerWindow)
	case len(registering) == 0:
		return reasonActivityNotRegistered, fmt.Sprintf("%s: none of the %d live workers of %s registers it. They register %s. "+
			"They take %s. It runs when a worker that registers it comes",
			what, len(workers), store, registeredActivities(workers), tagsTaken(workers))
	}
	n := len(registering)
	return reasonNoWorkerForTag, fmt.Sprintf("%s: no live worker of %s takes %s. The %d that %s it %s %s. "+
		"A WorkerPool on this store with spec.activityTags [%s] (or [\"*\"]) runs it",
		what, store, takesPhrase(a.Tag), n, plural(n, "registers", "register"), plural(n, "takes", "take"), tagsTaken(registering), tagItem(a.Tag))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func takesPhrase(tag string) string {
	if tag == "" {
		return "untagged activities"
	}
	return fmt.Sprintf("tag %q", tag)
}

func tagPhrase(tag string) string {
	if tag == "" {
		return "(untagged)"
	}
	return fmt.Sprintf("with tag %q", tag)
}

// tagItem is the spec.activityTags item that takes tag.
func tagItem(tag string) string {
	if tag == "" {
		return provider.UntaggedMark
	}
	return tag
}

// tagsTaken describes the workers' tag filters, each with how many workers
// use it: "untagged activities only (2 workers); tags gpu (1 worker)".
func tagsTaken(workers []provider.WorkerInfo) string {
	count := map[string]int{}
	for _, w := range workers {
		count[describeFilter(w.Tags)]++
	}
	var parts []string
	for _, d := range sortedKeys(count) {
		parts = append(parts, fmt.Sprintf("%s (%d %s)", d, count[d], plural(count[d], "worker", "workers")))
	}
	return strings.Join(parts, "; ")
}

func describeFilter(f provider.TagFilter) string {
	switch {
	case f.Any:
		return "every activity"
	case len(f.Tags) == 0:
		return "untagged activities only"
	case f.Untagged:
		return "untagged activities and tags " + strings.Join(f.Tags, ", ")
	}
	return "tags " + strings.Join(f.Tags, ", ")
}

// registeredActivities lists the activities the workers register, at most ten.
func registeredActivities(workers []provider.WorkerInfo) string {
	seen := map[string]int{}
	for _, w := range workers {
		for _, name := range w.Activities {
			seen[name]++
		}
	}
	return listAtMost(sortedKeys(seen), 10)
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkSchedule keeps, per Orchestration, when its store may next be read
// for a check: a busy instance is reconciled on every change it commits,
// and the check must not add a read to each.
type checkSchedule struct {
	mu     sync.Mutex
	next   map[types.UID]time.Time
	pruned time.Time
}

// staleCheck: entries whose time passed this long ago belong to objects no
// longer reconciled as running (finished, deleted, or led elsewhere).
const staleCheck = 10 * time.Minute

// wait is how long until the object's next check; 0 when due.
func (s *checkSchedule) wait(uid types.UID, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.next[uid].Sub(now), 0)
}

func (s *checkSchedule) schedule(uid types.UID, at, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		s.next = map[types.UID]time.Time{}
	}
	s.next[uid] = at
	if now.Sub(s.pruned) < staleCheck {
		return
	}
	s.pruned = now
	for k, t := range s.next {
		if now.Sub(t) > staleCheck {
			delete(s.next, k)
		}
	}
}

func (s *checkSchedule) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.next, uid)
}
