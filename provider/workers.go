package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// WorkerInfo is what a worker process announces about itself: who it is and
// which code it runs, so that tools (the operator) can tell a user that no
// running worker registers an orchestration instead of leaving its instance
// silently pending.
type WorkerInfo struct {
	ID string `json:"id"`
	// Orchestrations maps each registered orchestration name to its versions.
	Orchestrations map[string][]string `json:"orchestrations"`
	Activities     []string            `json:"activities"`
	// Tags is the filter of the worker's activity fetches: which tagged
	// activities it runs.
	Tags TagFilter `json:"tags"`
	// StartedAt and LastSeen are set by the store (its clock where it has one).
	StartedAt time.Time `json:"startedAt"`
	LastSeen  time.Time `json:"lastSeen"`
}

// Registers reports whether the worker runs the named orchestration, and the
// version when one is given.
func (w WorkerInfo) Registers(name, version string) bool {
	versions, ok := w.Orchestrations[name]
	if !ok || version == "" {
		return ok
	}
	for _, v := range versions {
		if CompareVersions(v, version) == 0 {
			return true
		}
	}
	return false
}

// RunsActivity reports whether the worker runs the named activity with tag
// ("" for none).
func (w WorkerInfo) RunsActivity(name, tag string) bool {
	return w.Tags.Matches(tag) && slices.Contains(w.Activities, name)
}

// Workers is the optional part of a provider that keeps worker announcements.
// Both built-in providers implement it; the runtime announces itself when its
// provider does.
type Workers interface {
	// Heartbeat records the worker's announcement, or refreshes it.
	Heartbeat(ctx context.Context, w WorkerInfo) error
	// RemoveWorker forgets worker req.ID; a worker calls it when it shuts
	// down cleanly.
	RemoveWorker(ctx context.Context, req WorkerRequest) error
	// ListWorkers returns the workers whose last heartbeat is at most
	// req.Within old.
	ListWorkers(ctx context.Context, req ListWorkersRequest) ([]WorkerInfo, error)
}

// WorkerRequest names a worker.
type WorkerRequest struct {
	ID string
}

// ListWorkersRequest says how recent a worker's heartbeat must be to be listed.
type ListWorkersRequest struct {
	Within time.Duration
}

// workerRecord is the stored form of a WorkerInfo: what the worker announces,
// without the identity and the times the store keeps in columns.
type workerRecord struct {
	Orchestrations map[string][]string `json:"orchestrations"`
	Activities     []string            `json:"activities"`
	Tags           *TagFilter          `json:"tags,omitempty"`
}

// EncodeWorkerInfo is the JSON a provider stores for w.
func EncodeWorkerInfo(w WorkerInfo) (string, error) {
	if w.ID == "" {
		return "", errors.New("worker ID is required")
	}
	r := workerRecord{Orchestrations: w.Orchestrations, Activities: w.Activities}
	if w.Tags.Any || len(w.Tags.Tags) > 0 {
		r.Tags = &w.Tags
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encode worker %s: %w", w.ID, err)
	}
	return string(b), nil
}

// DecodeWorkerInfo reads what EncodeWorkerInfo wrote.
func DecodeWorkerInfo(id, stored string) (WorkerInfo, error) {
	var r workerRecord
	if err := json.Unmarshal([]byte(stored), &r); err != nil {
		return WorkerInfo{}, fmt.Errorf("worker %s: corrupt announcement: %w", id, err)
	}
	w := WorkerInfo{ID: id, Orchestrations: r.Orchestrations, Activities: r.Activities}
	if r.Tags != nil {
		w.Tags = *r.Tags
	}
	return w, nil
}
