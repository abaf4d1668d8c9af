package engine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/duroxide/duroxide-go/provider"
)

// Limits of an instance's durable values.
const (
	MaxValueKeyBytes = provider.MaxValueKeyBytes
	MaxValueBytes    = provider.MaxValueBytes
	MaxValueKeys     = provider.MaxValueKeys
)

// Durable values are a small key/value store of the instance, kept across
// turns, crashes and continue-as-new, and readable by clients
// (Client.Value) while the orchestration runs:
//   - each execution's OrchestrationStarted event records the values it
//     began with, and the code sets the same values again when it
//     replays, so a replayed read sees what the first run saw;
//   - each change is recorded as a history event (for people reading the
//     history; replay does not match them) and written to the store with
//     the turn that made it.

// SetValue stores v, encoded as JSON, under key. An invalid key, a value
// larger than MaxValueBytes or a key beyond MaxValueKeys is refused with an
// error (a *LimitError for the limits) and changes nothing.
func (c *OrchestrationContext) SetValue(key string, v any) error {
	if err := provider.ValidateValueKey(key); err != nil {
		return err
	}
	payload, err := EncodePayload(v)
	if err != nil {
		return fmt.Errorf("set value %q: %w", key, err)
	}
	t := c.t
	if len(payload) > MaxValueBytes {
		return &LimitError{What: "value", Size: len(payload), Limit: MaxValueBytes, Hint: "value of key " + key}
	}
	old, had := t.values[key]
	if !had && len(t.values) >= MaxValueKeys {
		return &LimitError{What: "value keys", Size: len(t.values) + 1, Limit: MaxValueKeys, Hint: "clear keys no longer needed"}
	}
	if had && old == payload {
		return nil
	}
	if t.values == nil {
		t.values = map[string]string{}
	}
	t.values[key] = payload
	t.valueChanged(key, provider.Event{Kind: provider.EventValueSet, Name: key, Input: payload})
	return nil
}

// Value decodes the value stored under key into out and reports whether
// there is one.
func (c *OrchestrationContext) Value(key string, out any) (bool, error) {
	v, ok := c.t.values[key]
	if !ok {
		return false, nil
	}
	return true, DecodePayload(v, out)
}

// ValueKeys lists the keys that hold a value, sorted.
func (c *OrchestrationContext) ValueKeys() []string {
	return slices.Sorted(maps.Keys(c.t.values))
}

// ClearValue removes key's value; a key without one is no error.
func (c *OrchestrationContext) ClearValue(key string) {
	t := c.t
	if _, ok := t.values[key]; !ok {
		return
	}
	delete(t.values, key)
	t.valueChanged(key, provider.Event{Kind: provider.EventValueCleared, Name: key})
}

// ClearValues removes every value.
func (c *OrchestrationContext) ClearValues() {
	t := c.t
	if len(t.values) == 0 {
		return
	}
	clear(t.values)
	if t.replaying {
		return
	}
	t.valuesReplaced = true
	clear(t.valuesChanged)
	t.appendEvent(provider.Event{Kind: provider.EventValuesCleared})
}

// valueChanged notes a change of key made by live code, for the ack, and
// records it in history.
func (t *turn) valueChanged(key string, ev provider.Event) {
	if t.replaying {
		return
	}
	if t.valuesChanged == nil {
		t.valuesChanged = map[string]bool{}
	}
	t.valuesChanged[key] = true
	t.appendEvent(ev)
}

// startValues makes the execution begin with values (nil: none, and no
// map until one is set).
func (t *turn) startValues(values map[string]string) {
	t.values = maps.Clone(values)
}

// carriedValues are the values a continue-as-new carries to the next
// execution (nil for none).
func carriedValues(values map[string]string) map[string]string {
	if len(values) == 0 {
		return nil
	}
	return maps.Clone(values)
}

// valuesUpdate is what the turn writes to the store's values: the keys live
// code changed, or all of them after ClearValues or a rewind.
func (t *turn) valuesUpdate() *provider.ValuesUpdate {
	if !t.valuesReplaced && len(t.valuesChanged) == 0 {
		return nil
	}
	u := &provider.ValuesUpdate{Replace: t.valuesReplaced, Set: map[string]string{}}
	keys := t.valuesChanged
	if t.valuesReplaced {
		keys = map[string]bool{}
		for k := range t.values {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if v, ok := t.values[k]; ok {
			u.Set[k] = v
		} else if !t.valuesReplaced {
			u.Clear = append(u.Clear, k)
		}
	}
	return u
}

// isValueEvent reports whether k records a change of the durable values,
// which replay does not match.
func isValueEvent(k provider.EventKind) bool {
	return k == provider.EventValueSet || k == provider.EventValueCleared || k == provider.EventValuesCleared
}
