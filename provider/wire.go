package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The stored form of events and work items embeds their payloads (Input,
// Output, Result) as JSON values rather than as JSON strings, so a payload is
// stored once, not escaped again inside the record (a 10 MB input used to
// take 31 MB of history). A payload that is not valid JSON — providers store
// whatever they are given — goes in a "<name>Text" field as a string. Records
// written before this format have no "v" field and hold every payload as a
// string; they still decode.
//
// Whitespace inside a JSON payload is not kept: the runtime produces
// compact payloads, so what it stores reads back byte for byte.
const wireFormat = 2

type eventAlias Event

type eventWire struct {
	*eventAlias
	Format     int             `json:"v,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	InputText  string          `json:"inputText,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	OutputText string          `json:"outputText,omitempty"`
}

// MarshalJSON writes the event with its payloads embedded as JSON.
func (e Event) MarshalJSON() ([]byte, error) {
	w := eventWire{eventAlias: (*eventAlias)(&e), Format: wireFormat}
	w.Input, w.InputText = splitPayload(e.Input)
	w.Output, w.OutputText = splitPayload(e.Output)
	return marshalWire(w)
}

// UnmarshalJSON reads an event in either stored format.
func (e *Event) UnmarshalJSON(data []byte) error {
	w := eventWire{eventAlias: (*eventAlias)(e)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var err error
	if e.Input, err = joinPayload(w.Format, w.Input, w.InputText); err != nil {
		return fmt.Errorf("event input: %w", err)
	}
	if e.Output, err = joinPayload(w.Format, w.Output, w.OutputText); err != nil {
		return fmt.Errorf("event output: %w", err)
	}
	return nil
}

type workItemAlias WorkItem

type workItemWire struct {
	*workItemAlias
	Format     int             `json:"v,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	InputText  string          `json:"inputText,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	ResultText string          `json:"resultText,omitempty"`
}

// MarshalJSON writes the work item with its payloads embedded as JSON.
func (w WorkItem) MarshalJSON() ([]byte, error) {
	x := workItemWire{workItemAlias: (*workItemAlias)(&w), Format: wireFormat}
	x.Input, x.InputText = splitPayload(w.Input)
	x.Result, x.ResultText = splitPayload(w.Result)
	return marshalWire(x)
}

// UnmarshalJSON reads a work item in either stored format.
func (w *WorkItem) UnmarshalJSON(data []byte) error {
	x := workItemWire{workItemAlias: (*workItemAlias)(w)}
	if err := json.Unmarshal(data, &x); err != nil {
		return err
	}
	var err error
	if w.Input, err = joinPayload(x.Format, x.Input, x.InputText); err != nil {
		return fmt.Errorf("work item input: %w", err)
	}
	if w.Result, err = joinPayload(x.Format, x.Result, x.ResultText); err != nil {
		return fmt.Errorf("work item result: %w", err)
	}
	return nil
}

// marshalWire encodes without escaping <, > and &, which JSON does not need
// and which would make stored payloads larger than the runtime's.
func marshalWire(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// splitPayload says how a payload is stored: as a JSON value when it is one,
// else as text.
func splitPayload(p string) (json.RawMessage, string) {
	if p == "" {
		return nil, ""
	}
	if json.Valid([]byte(p)) {
		return json.RawMessage(p), ""
	}
	return nil, p
}

// joinPayload is the inverse of splitPayload for a record of the given format.
func joinPayload(format int, raw json.RawMessage, text string) (string, error) {
	if len(raw) == 0 {
		return text, nil
	}
	if format < wireFormat {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("legacy payload is not a string: %w", err)
		}
		return s, nil
	}
	return string(raw), nil
}
