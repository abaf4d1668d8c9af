package controllers

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
)

// eventSource names the operator as the reporter of its Events.
const eventSource = "duroxide-operator"

// startEventRecorder records the controllers' Events through a broadcaster of
// the operator's own rather than the manager's: the manager's sink cannot be
// wrapped, and it logs every Event the API server refuses as an error. The
// broadcaster stops when ctx ends.
func startEventRecorder(ctx context.Context, mgr ctrl.Manager) (events.EventRecorder, error) {
	client, err := eventsv1client.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	log := mgr.GetLogger().WithName("events")
	b := newEventBroadcaster(&events.EventSinkImpl{Interface: client}, log)
	// client-go logs what the sink reports through the context's logger.
	if err := b.StartRecordingToSinkWithContext(logr.NewContext(ctx, log)); err != nil {
		return nil, fmt.Errorf("start recording events: %w", err)
	}
	go func() {
		<-ctx.Done()
		b.Shutdown()
	}()
	return b.NewRecorder(mgr.GetScheme(), eventSource), nil
}

// newEventBroadcaster returns a broadcaster that records Events to sink,
// dropping at debug level those refused because their namespace is being
// deleted.
func newEventBroadcaster(sink events.EventSink, log logr.Logger) events.EventBroadcaster {
	return events.NewBroadcaster(terminatingNamespaceSink{EventSink: sink, log: log})
}

// terminatingNamespaceSink drops the Events the API server refuses because
// their namespace is being deleted. Deleting a namespace deletes the objects
// the operator reports on while it still reports on them, so such a refusal
// is expected: it is logged at debug level instead of client-go's error.
// Every other refusal is passed on, and stays an error.
type terminatingNamespaceSink struct {
	events.EventSink
	log logr.Logger
}

func (s terminatingNamespaceSink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	created, err := s.EventSink.Create(ctx, event)
	return created, s.dropIfNamespaceTerminating(event, err)
}

func (s terminatingNamespaceSink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	updated, err := s.EventSink.Update(ctx, event)
	return updated, s.dropIfNamespaceTerminating(event, err)
}

func (s terminatingNamespaceSink) Patch(ctx context.Context, event *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	patched, err := s.EventSink.Patch(ctx, event, data)
	return patched, s.dropIfNamespaceTerminating(event, err)
}

// dropIfNamespaceTerminating returns err, unless it refuses the Event because
// its namespace is being deleted: then it logs that at debug level and
// returns nil, so the broadcaster neither retries nor logs an error.
func (s terminatingNamespaceSink) dropIfNamespaceTerminating(event *eventsv1.Event, err error) error {
	if !isNamespaceTerminating(err) {
		return err
	}
	s.log.V(1).Info("Event dropped: its namespace is being deleted", "namespace", event.Namespace,
		"regarding", event.Regarding.Kind+"/"+event.Regarding.Name, "reason", event.Reason, "note", event.Note)
	return nil
}

// isNamespaceTerminating reports whether err is the API server's refusal to
// create something in a namespace being deleted (NamespaceLifecycle
// admission: Forbidden, cause NamespaceTerminating).
func isNamespaceTerminating(err error) bool {
	return apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
