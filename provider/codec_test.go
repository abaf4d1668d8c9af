package provider

import (
	"errors"
	"strings"
	"testing"
)

func TestWorkItemValidate(t *testing.T) {
	cases := []struct {
		name string
		item WorkItem
		ok   bool
	}{
		{"start", WorkItem{Kind: WorkStartOrchestration, Instance: "a", Name: "O"}, true},
		{"activity", WorkItem{Kind: WorkActivityExecute, Instance: "a", Name: "A"}, true},
		{"completion", WorkItem{Kind: WorkActivityCompleted, Instance: "a", ID: 2}, true},
		{"no kind", WorkItem{Instance: "a"}, false},
		{"unknown kind", WorkItem{Kind: "Nope", Instance: "a"}, false},
		{"no instance", WorkItem{Kind: WorkExternalRaised, Name: "e"}, false},
		{"start without name", WorkItem{Kind: WorkStartOrchestration, Instance: "a"}, false},
		{"activity without name", WorkItem{Kind: WorkActivityExecute, Instance: "a"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.item.Validate(); (err == nil) != c.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, c.ok)
			}
		})
	}
}

func TestWorkItemRoundTrip(t *testing.T) {
	in := WorkItem{Kind: WorkActivityFailed, Instance: "i", ExecutionID: 2, ID: 7,
		Error: &ErrorDetails{Class: ErrorApplication, Message: "boom"}}
	data, err := EncodeWorkItem(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeWorkItem(data)
	if err != nil {
		t.Fatal(err)
	}
	if out.Kind != in.Kind || out.Instance != in.Instance || out.ID != in.ID || out.Error == nil || *out.Error != *in.Error {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
}

func TestStateOf(t *testing.T) {
	cases := []struct {
		exists        bool
		exec, current int64
		status        ExecutionStatus
		want          ExecutionState
	}{
		{false, 1, 0, "", StateMissing},
		{true, 1, 2, StatusRunning, StateContinuedAsNew},
		{true, 2, 2, StatusRunning, StateRunning},
		{true, 1, 1, "", StateRunning},
		{true, 1, 1, StatusCompleted, StateCompleted},
		{true, 1, 1, StatusFailed, StateFailed},
		{true, 1, 1, StatusTerminated, StateTerminated},
	}
	for _, c := range cases {
		if got := StateOf(c.exists, c.exec, c.current, c.status); got != c.want {
			t.Errorf("StateOf(%v, %d, %d, %q) = %s, want %s", c.exists, c.exec, c.current, c.status, got, c.want)
		}
	}
	if StateRunning.Cancelled() || !StateMissing.Cancelled() {
		t.Fatal("Cancelled(): running must not be cancelled, missing must")
	}
}

func TestCorruptDataErrorIsErrCorruptData(t *testing.T) {
	err := error(&CorruptDataError{Instance: "x", What: "event 1", Err: errors.New("bad json")})
	if !errors.Is(err, ErrCorruptData) {
		t.Fatal("CorruptDataError does not match ErrCorruptData")
	}
	if got := err.Error(); got != `instance "x": event 1: bad json` {
		t.Fatalf("message %q", got)
	}
}

// The decoders face whatever is stored; they must return errors, never panic,
// and what they accept must be valid.
func FuzzDecodeWorkItem(f *testing.F) {
	f.Add(`{"kind":"StartOrchestration","instance":"a","name":"O"}`)
	f.Add(`{"kind":"ActivityExecute","instance":"a","name":"A","id":-1}`)
	f.Add(`{"kind":`)
	f.Add(`null`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, data string) {
		w, err := DecodeWorkItem(data)
		if err == nil && w.Validate() != nil {
			t.Fatalf("decoded an invalid item from %q", data)
		}
	})
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(`{"id":1,"kind":"OrchestrationStarted"}`)
	f.Add(`{"id":0,"kind":"X"}`)
	f.Add(`{"id":1e400}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, data string) {
		e, err := DecodeEvent(data)
		if err == nil && (e.ID <= 0 || e.Kind == "") {
			t.Fatalf("decoded an invalid event from %q", data)
		}
	})
}

func TestPayloadsAreStoredAsJSONValues(t *testing.T) {
	input := `{"name":"<world>","tags":["a","b"]}`
	data, err := EncodeEvent(Event{ID: 1, Kind: EventOrchestrationStarted, Name: "O", Input: input, Output: `"done"`})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(data, `"input":`+input) || !strings.Contains(data, `"output":"done"`) {
		t.Fatalf("payloads are not embedded as JSON: %s", data)
	}
	if len(data) > len(input)+100 {
		t.Fatalf("stored event is %d bytes for a %d-byte input: %s", len(data), len(input), data)
	}
	e, err := DecodeEvent(data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Input != input || e.Output != `"done"` {
		t.Fatalf("round trip: input %q output %q", e.Input, e.Output)
	}
}

func TestPayloadThatIsNotJSONRoundTrips(t *testing.T) {
	item := WorkItem{Kind: WorkActivityCompleted, Instance: "i", ID: 2, Input: "not json", Result: "{broken",
		Carry: []WorkItem{{Kind: WorkExternalRaised, Instance: "i", Name: "e", Input: `[1,2]`}}}
	data, err := EncodeWorkItem(item)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeWorkItem(data)
	if err != nil {
		t.Fatal(err)
	}
	if out.Input != item.Input || out.Result != item.Result || len(out.Carry) != 1 || out.Carry[0].Input != `[1,2]` {
		t.Fatalf("round trip: got %+v from %s", out, data)
	}
	if !strings.Contains(data, `"input":[1,2]`) {
		t.Fatalf("carried payload is not embedded as JSON: %s", data)
	}
}

func TestLegacyRecordsWithStringPayloadsStillDecode(t *testing.T) {
	// The format before payloads were embedded: every payload a JSON string, no "v".
	legacy := `{"id":3,"kind":"ActivityCompleted","sourceId":2,"output":"{\"n\":1}","input":"\"x\""}`
	e, err := DecodeEvent(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if e.Output != `{"n":1}` || e.Input != `"x"` {
		t.Fatalf("legacy event: input %q output %q", e.Input, e.Output)
	}
	w, err := DecodeWorkItem(`{"kind":"ExternalRaised","instance":"i","name":"e","input":"[1]"}`)
	if err != nil {
		t.Fatal(err)
	}
	if w.Input != "[1]" {
		t.Fatalf("legacy work item input %q", w.Input)
	}
}
