package provider

import (
	"encoding/json"
	"slices"
)

// Headers are the pairs that travel with a start and with the work a turn
// schedules (Event.Headers, WorkItem.Headers): trace context, for one.
//
// They are stored as a JSON object, on every start, scheduled activity and
// child and on the work item that carries it, so their codec is on the
// commit and fetch paths. Headers of printable ASCII, which is what
// propagators write, are encoded and decoded here without reflection; any
// other headers go through encoding/json, and both read back the same map.
type Headers map[string]string

// MarshalJSON writes the headers as a JSON object, keys sorted.
func (h Headers) MarshalJSON() ([]byte, error) {
	if h == nil {
		return []byte("null"), nil
	}
	size := 2
	for k, v := range h {
		if !plainJSON(k) || !plainJSON(v) {
			return json.Marshal(map[string]string(h))
		}
		size += len(k) + len(v) + 6
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	if len(h) == 1 {
		for k, v := range h {
			buf = appendPair(buf, k, v)
		}
	} else {
		keys := make([]string, 0, len(h))
		for k := range h {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendPair(buf, k, h[k])
		}
	}
	return append(buf, '}'), nil
}

func appendPair(buf []byte, k, v string) []byte {
	buf = append(buf, '"')
	buf = append(buf, k...)
	buf = append(buf, '"', ':', '"')
	buf = append(buf, v...)
	return append(buf, '"')
}

// UnmarshalJSON reads a JSON object of strings; null leaves h as it is.
func (h *Headers) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	if m, ok := parsePlainObject(data); ok {
		*h = m
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*h = m
	return nil
}

// plainJSON reports whether s is written in JSON as itself between quotes:
// printable ASCII without quote or backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// parsePlainObject parses an object whose keys and values are all plain
// strings (plainJSON), with optional whitespace; ok is false for anything
// else, which encoding/json then reads (or refuses). The map's strings
// share one copy of data.
func parsePlainObject(data []byte) (m Headers, ok bool) {
	s := string(data)
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	m = make(Headers, 1)
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return m, skipSpace(s, i+1) == len(s)
	}
	for {
		var k, v string
		if k, i, ok = plainString(s, i); !ok {
			return nil, false
		}
		if i = skipSpace(s, i); i >= len(s) || s[i] != ':' {
			return nil, false
		}
		if v, i, ok = plainString(s, skipSpace(s, i+1)); !ok {
			return nil, false
		}
		m[k] = v
		if i = skipSpace(s, i); i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return m, skipSpace(s, i+1) == len(s)
		default:
			return nil, false
		}
	}
}

// plainString reads a quoted plain string at s[i:], returning it and the
// index after its closing quote.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", i, false
		}
	}
	return "", i, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}
