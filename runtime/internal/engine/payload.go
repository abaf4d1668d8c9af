package engine

import (
	"encoding/json"
	"fmt"
)

// Payloads (inputs, outputs, event data) travel and are stored as JSON, in
// compact form so that the same value always has the same bytes.

func EncodePayload(v any) (string, error) {
	var b []byte
	var err error
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) == 0 {
			return "", nil
		}
		// Marshal validates and compacts raw JSON, as it does the JSON it produces.
		b, err = json.Marshal(raw)
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return "", fmt.Errorf("encode payload %T: %w", v, err)
	}
	if len(b) > MaxPayloadBytes {
		return "", &LimitError{What: "payload", Size: len(b), Limit: MaxPayloadBytes,
			Hint: "pass a reference (a key or URL) to large data instead of the data"}
	}
	return string(b), nil
}

// DecodePayload fills out from data; an empty payload leaves out at its zero value.
func DecodePayload(data string, out any) error {
	if out == nil || data == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(data), out); err != nil {
		return fmt.Errorf("decode payload into %T: %w", out, err)
	}
	return nil
}
