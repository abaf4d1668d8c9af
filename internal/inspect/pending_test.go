package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func TestWaitingOn(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC).UnixMilli()
	events := []provider.Event{
		{ID: 1, Kind: provider.EventOrchestrationStarted, Time: at},
		{ID: 2, Kind: provider.EventActivityScheduled, Name: "done", Time: at},
		{ID: 3, Kind: provider.EventActivityScheduled, Name: "open", Time: at},
		{ID: 4, Kind: provider.EventExternalSubscribed, Name: "go", Time: at},
		{ID: 5, Kind: provider.EventExternalSubscribed, Name: "go", Time: at},
		{ID: 6, Kind: provider.EventTimerCreated, FireAt: at + 1000, Reason: "retry backoff of open after attempt 1", Time: at},
		{ID: 7, Kind: provider.EventSubOrchestrationScheduled, Name: "Sub", Instance: "kid", Time: at},
		{ID: 8, Kind: provider.EventTimerCreated, FireAt: at + 5000, Time: at},
		{ID: 9, Kind: provider.EventActivityCompleted, SourceID: 2, Time: at},
		{ID: 10, Kind: provider.EventExternalRaised, Name: "go", Time: at},
		{ID: 11, Kind: provider.EventCancelRequested, SourceID: 8, Time: at},
	}
	var got []string
	for _, w := range WaitingOn(events) {
		got = append(got, w.Kind+" "+w.Name+" "+w.Instance)
	}
	want := []string{"activity open ", "event go ", "timer retry backoff ", "child Sub kid"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("waiting on %q, want %q (answered, raised and cancelled decisions left out)", got, want)
	}
}
