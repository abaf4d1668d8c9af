package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
)

// terminatingNamespaceRefusal is the API server's refusal of an Event in a
// namespace being deleted, as NamespaceLifecycle admission builds it.
func terminatingNamespaceRefusal(ns string) error {
	err := apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "e",
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace " + ns + " is being terminated", Field: "metadata.namespace"})
	return err
}

// rbacRefusal is a Forbidden without the namespace cause: a missing permission.
func rbacRefusal() error {
	return apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "e",
		errors.New(`User "duroxide-operator" cannot create resource "events"`))
}

func TestIsNamespaceTerminating(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"namespace terminating", terminatingNamespaceRefusal("gone"), true},
		{"wrapped", fmt.Errorf("create event: %w", terminatingNamespaceRefusal("gone")), true},
		{"forbidden by RBAC", rbacRefusal(), false},
		{"namespace not found", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "gone"), false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "e", nil), false},
		{"nil", nil, false},
	} {
		if got := isNamespaceTerminating(tc.err); got != tc.want {
			t.Errorf("%s: isNamespaceTerminating = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An Event refused because its namespace is being deleted is logged at
// debug level; any other refusal stays an error (client-go logs it).
func TestEventRefusalLogLevels(t *testing.T) {
	for _, tc := range []struct {
		name      string
		refusal   error
		wantError bool
	}{
		{"namespace terminating", terminatingNamespaceRefusal("ns"), false},
		{"forbidden by RBAC", rbacRefusal(), true},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "e", nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := NewLogRecorder()
			sink := &refusingSink{err: tc.refusal}
			RecordOneEvent(t, newEventBroadcaster(sink, log.Logger()), log.Logger(), "ns")
			entries := log.WaitFor(t, func(e LogEntry) bool { return e.Error || strings.Contains(e.Message, "namespace is being deleted") })
			errs := log.Errors()
			switch {
			case tc.wantError && len(errs) == 0:
				t.Fatalf("refusal %v logged no error; log: %v", tc.refusal, entries)
			case !tc.wantError && len(errs) > 0:
				t.Fatalf("refusal in a terminating namespace logged at error level: %v", errs)
			case !tc.wantError && !log.HasDebug("Event dropped: its namespace is being deleted"):
				t.Fatalf("refusal in a terminating namespace not logged at debug level; log: %v", entries)
			}
			if sink.calls() != 1 {
				t.Errorf("sink called %d times, want once (a refused Event is not retried)", sink.calls())
			}
		})
	}
}

// refusingSink refuses every Event with err.
type refusingSink struct {
	err error
	mu  sync.Mutex
	n   int
}

func (s *refusingSink) refuse() (*eventsv1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return nil, s.err
}

func (s *refusingSink) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *refusingSink) Create(context.Context, *eventsv1.Event) (*eventsv1.Event, error) {
	return s.refuse()
}
func (s *refusingSink) Update(context.Context, *eventsv1.Event) (*eventsv1.Event, error) {
	return s.refuse()
}
func (s *refusingSink) Patch(context.Context, *eventsv1.Event, []byte) (*eventsv1.Event, error) {
	return s.refuse()
}

// RecordOneEvent records one Event about a ConfigMap "cm" in namespace ns
// through b, which logs to log, and stops b when the test ends.
func RecordOneEvent(t *testing.T, b events.EventBroadcaster, log logr.Logger, ns string) {
	t.Helper()
	if err := b.StartRecordingToSinkWithContext(logr.NewContext(t.Context(), log)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", UID: "0c0c0c0c-0000-0000-0000-000000000000"}}
	b.NewRecorder(eventScheme(), eventSource).Eventf(cm, nil, corev1.EventTypeNormal, "Tested", "Test", "an Event about %s", cm.Name)
}

// eventScheme knows the kind of the object RecordOneEvent reports on.
func eventScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// LogEntry is one call of a logger: Error, or Info at Level (1 is debug).
type LogEntry struct {
	Error   bool
	Level   int
	Message string
	Values  []any
}

func (e LogEntry) String() string {
	if e.Error {
		return fmt.Sprintf("ERROR %s %v", e.Message, e.Values)
	}
	return fmt.Sprintf("V(%d) %s %v", e.Level, e.Message, e.Values)
}

// LogRecorder is a logr sink that keeps every entry with its level.
type LogRecorder struct {
	mu      sync.Mutex
	entries []LogEntry
}

// NewLogRecorder returns an empty LogRecorder.
func NewLogRecorder() *LogRecorder { return &LogRecorder{} }

// Logger logs into the recorder, at every level.
func (r *LogRecorder) Logger() logr.Logger { return logr.New(recorderSink{r: r}) }

func (r *LogRecorder) add(e LogEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
}

// Entries returns a copy of what was logged so far.
func (r *LogRecorder) Entries() []LogEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]LogEntry(nil), r.entries...)
}

// Errors returns the entries logged at error level.
func (r *LogRecorder) Errors() []LogEntry {
	var errs []LogEntry
	for _, e := range r.Entries() {
		if e.Error {
			errs = append(errs, e)
		}
	}
	return errs
}

// HasDebug reports whether msg was logged at debug level (V(1)).
func (r *LogRecorder) HasDebug(msg string) bool {
	for _, e := range r.Entries() {
		if !e.Error && e.Level == 1 && e.Message == msg {
			return true
		}
	}
	return false
}

// WaitFor waits up to 10 s for an entry that ok accepts, then returns the entries.
func (r *LogRecorder) WaitFor(t *testing.T, ok func(LogEntry) bool) []LogEntry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries := r.Entries()
		for _, e := range entries {
			if ok(e) {
				return entries
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log entry looked for within 10s; log: %v", entries)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type recorderSink struct {
	r      *LogRecorder
	values []any
}

func (s recorderSink) Init(logr.RuntimeInfo) {}
func (s recorderSink) Enabled(int) bool      { return true }
func (s recorderSink) Info(level int, msg string, kv ...any) {
	s.r.add(LogEntry{Level: level, Message: msg, Values: append(append([]any(nil), s.values...), kv...)})
}
func (s recorderSink) Error(err error, msg string, kv ...any) {
	s.r.add(LogEntry{Error: true, Message: msg, Values: append(append([]any(nil), s.values...), append(kv, "error", err)...)})
}
func (s recorderSink) WithValues(kv ...any) logr.LogSink {
	return recorderSink{r: s.r, values: append(append([]any(nil), s.values...), kv...)}
}
func (s recorderSink) WithName(string) logr.LogSink { return s }
