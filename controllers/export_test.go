package controllers

import (
	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
)

// NewEventBroadcasterForTest is newEventBroadcaster, for the envtest tests.
func NewEventBroadcasterForTest(sink events.EventSink, log logr.Logger) events.EventBroadcaster {
	return newEventBroadcaster(sink, log)
}
