package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
)

// Reasons of the Running condition while a started instance has not run its
// first turn (besides reasonNotRegistered).
const (
	reasonPending       = "Pending"
	reasonNoLiveWorkers = "NoLiveWorkers"
)

// pendingGrace is how long an instance may wait for its first turn before
// the operator looks for a cause: normally a worker takes it within
// milliseconds, and a worker built before announcements existed is not
// reported missing just because it is silent.
const pendingGrace = 5 * time.Second

// explainPending says in the Running condition why a started instance has not
// run its first turn yet, from the workers' announcements in the store: no
// live worker, no live worker that registers the orchestration, or simply
// waiting for one. It returns when to look again.
func (r *orchestrationReconciler) explainPending(ctx context.Context, o *v1.Orchestration, store *poolStore) time.Duration {
	reason, msg := reasonPending, "started; waiting for a worker of pool "+o.Spec.WorkerPool+" to run the first turn"
	waited := time.Since(pendingSince(o))
	if waited < pendingGrace {
		setCondition(o, condRunning, metav1.ConditionFalse, reason, msg)
		return pendingGrace - waited
	}
	if workers, ok := store.liveWorkers(ctx); ok {
		switch {
		case len(workers) == 0:
			reason = reasonNoLiveWorkers
			msg = fmt.Sprintf("no worker of pool %s has announced itself in the last %s: is the pool scaled to 0, or are its pods failing?",
				o.Spec.WorkerPool, liveWorkerWindow)
		case !anyRegisters(workers, o.Spec.Orchestration, o.Spec.Version):
			reason = reasonNotRegistered
			msg = fmt.Sprintf("none of the %d live workers of pool %s registers orchestration %q%s (they register %s); "+
				"the instance waits, untouched, for a worker that does",
				len(workers), o.Spec.WorkerPool, o.Spec.Orchestration, versionSuffix(o.Spec.Version), registeredNames(workers))
		}
	}
	if c := findCondition(o, condRunning); reason != reasonPending && (c == nil || c.Reason != reason) {
		r.Recorder.Eventf(o, nil, "Warning", reason, "Pending", "%s", msg)
	}
	setCondition(o, condRunning, metav1.ConditionFalse, reason, msg)
	return r.Resync
}

// pendingSince is when the instance began to wait: the Running condition
// turned False then, and reason changes keep that time.
func pendingSince(o *v1.Orchestration) time.Time {
	if c := findCondition(o, condRunning); c != nil && c.Status == metav1.ConditionFalse {
		return c.LastTransitionTime.Time
	}
	return time.Now()
}

func anyRegisters(workers []provider.WorkerInfo, name, version string) bool {
	return slices.ContainsFunc(workers, func(w provider.WorkerInfo) bool { return w.Registers(name, version) })
}

func versionSuffix(version string) string {
	if version == "" {
		return ""
	}
	return " version " + version
}

// registeredNames lists the orchestrations the workers register, at most ten.
func registeredNames(workers []provider.WorkerInfo) string {
	var names []string
	for _, w := range workers {
		for name := range w.Orchestrations {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return listAtMost(slices.Compact(names), 10)
}

// listAtMost joins the first most names and counts the rest; "nothing" for none.
func listAtMost(names []string, most int) string {
	if len(names) == 0 {
		return "nothing"
	}
	if len(names) > most {
		return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
	}
	return strings.Join(names, ", ")
}
