package controllers_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/duroxide/duroxide-go/controllers"
)

// The API server refuses an Event about an object of a namespace being
// deleted. That is expected while a namespace goes: the operator logs it at
// debug level, not as "Server rejected event" at error level. An Event in a
// live namespace is still recorded.
func TestEventRefusedInTerminatingNamespace(t *testing.T) {
	client, err := eventsv1client.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := &events.EventSinkImpl{Interface: client}
	doomed := namespace(t)
	if err := k8s.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: doomed}}); err != nil {
		t.Fatal(err)
	}
	// envtest runs no namespace controller: the namespace stays Terminating.
	eventually(t, types.NamespacedName{Name: doomed}, &corev1.Namespace{}, "namespace Terminating",
		func(n *corev1.Namespace) bool { return n.Status.Phase == corev1.NamespaceTerminating },
		func(n *corev1.Namespace) string { return string(n.Status.Phase) })

	log := controllers.NewLogRecorder()
	controllers.RecordOneEvent(t, controllers.NewEventBroadcasterForTest(sink, log.Logger()), log.Logger(), doomed)
	entries := log.WaitFor(t, func(e controllers.LogEntry) bool {
		return e.Error || e.Message == "Event dropped: its namespace is being deleted"
	})
	if errs := log.Errors(); len(errs) > 0 {
		t.Fatalf("an Event refused in a terminating namespace was logged at error level: %v", errs)
	}
	if !log.HasDebug("Event dropped: its namespace is being deleted") {
		t.Fatalf("the refusal was not logged at debug level; log: %v", entries)
	}

	live := namespace(t)
	liveLog := controllers.NewLogRecorder()
	controllers.RecordOneEvent(t, controllers.NewEventBroadcasterForTest(sink, liveLog.Logger()), liveLog.Logger(), live)
	recorded := waitForEvent(t, live, "Tested")
	if errs := liveLog.Errors(); len(errs) > 0 {
		t.Fatalf("recording in a live namespace logged errors: %v", errs)
	}
	t.Logf("terminating namespace: refusal logged at debug level only; live namespace: Event %s recorded", recorded.Name)
}

// waitForEvent waits up to 10 s for an Event with reason in namespace ns.
func waitForEvent(t *testing.T, ns, reason string) *eventsv1.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list eventsv1.EventList
		err := k8s.List(t.Context(), &list, client.InNamespace(ns))
		for i := range list.Items {
			if list.Items[i].Reason == reason {
				return &list.Items[i]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Event %s in namespace %s within 10s (err=%v, %d Events)", reason, ns, err, len(list.Items))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
