package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"
)

// Limits of an instance's durable values (its key/value store).
const (
	// MaxValueKeyBytes is the longest key.
	MaxValueKeyBytes = 128
	// MaxValueBytes is the largest value (its JSON).
	MaxValueBytes = 16 * 1024
	// MaxValueKeys is how many keys an instance may hold.
	MaxValueKeys = 32
)

// ValuesUpdate is what a turn changes in its instance's values
// (OrchestrationAck.Values), applied after the history delta:
//   - with Replace, every value of the instance is removed first;
//   - each key of Set gets its value (a JSON document);
//   - each key of Clear is removed (a missing key is no error).
//
// A key is in Set or in Clear, not both.
type ValuesUpdate struct {
	Replace bool
	Set     map[string]string
	Clear   []string
}

// Empty reports whether u changes nothing.
func (u *ValuesUpdate) Empty() bool {
	return u == nil || (!u.Replace && len(u.Set) == 0 && len(u.Clear) == 0)
}

// Validate checks every key and value against the limits.
func (u *ValuesUpdate) Validate() error {
	if u == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(u.Set)) {
		if err := ValidateValueKey(k); err != nil {
			return err
		}
		if err := validateValue(k, u.Set[k]); err != nil {
			return err
		}
	}
	for _, k := range u.Clear {
		if err := ValidateValueKey(k); err != nil {
			return err
		}
		if _, ok := u.Set[k]; ok {
			return fmt.Errorf("value key %q is both set and cleared", k)
		}
	}
	return nil
}

// ValidateValueKey reports whether key is a valid value key: 1 to
// MaxValueKeyBytes bytes of UTF-8.
func ValidateValueKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("value key is empty")
	case len(key) > MaxValueKeyBytes:
		return fmt.Errorf("value key %.20q… is %d bytes; the limit is %d", key, len(key), MaxValueKeyBytes)
	case !utf8.ValidString(key):
		return fmt.Errorf("value key %q is not UTF-8", key)
	}
	return nil
}

func validateValue(key, v string) error {
	switch {
	case len(v) > MaxValueBytes:
		return fmt.Errorf("value of key %q is %d bytes; the limit is %d", key, len(v), MaxValueBytes)
	case !json.Valid([]byte(v)):
		return fmt.Errorf("value of key %q is not a JSON document", key)
	}
	return nil
}

// ValuesRequest asks for an instance's values: all of them, or those of
// Keys.
type ValuesRequest struct {
	Instance string
	Keys     []string
}
