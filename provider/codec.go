package provider

import (
	"encoding/json"
	"fmt"
)

// EncodeEvent serializes a history event for storage.
func EncodeEvent(e Event) (string, error) {
	b, err := e.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("encode event %d: %w", e.ID, err)
	}
	return string(b), nil
}

// DecodeEvent parses a stored history event and checks that it is usable.
func DecodeEvent(data string) (Event, error) {
	var e Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return Event{}, err
	}
	if e.ID <= 0 || e.Kind == "" {
		return Event{}, fmt.Errorf("event without id or kind")
	}
	return e, nil
}

// EncodeWorkItem serializes a work item for storage.
func EncodeWorkItem(w WorkItem) (string, error) {
	b, err := w.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("encode %s work item: %w", w.Kind, err)
	}
	return string(b), nil
}

// DecodeWorkItem parses a stored work item and validates it.
func DecodeWorkItem(data string) (WorkItem, error) {
	var w WorkItem
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		return WorkItem{}, err
	}
	if err := w.Validate(); err != nil {
		return WorkItem{}, err
	}
	return w, nil
}
