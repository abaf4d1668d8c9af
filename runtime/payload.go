package runtime

import (
	"encoding/json"
	"fmt"
)

// Payloads (inputs, outputs, event data) travel and are stored as JSON.

func encodePayload(v any) (string, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return string(raw), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode payload %T: %w", v, err)
	}
	return string(b), nil
}

// decodePayload fills out from data; an empty payload leaves out at its zero value.
func decodePayload(data string, out any) error {
	if out == nil || data == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(data), out); err != nil {
		return fmt.Errorf("decode payload into %T: %w", out, err)
	}
	return nil
}
