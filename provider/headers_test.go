package provider_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// Headers encode as encoding/json encodes a map of strings, and decode
// what encoding/json decodes, whether or not they take the fast path.
func TestHeadersJSONMatchesEncodingJSON(t *testing.T) {
	for _, h := range []map[string]string{
		{},
		{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		{"b": "2", "a": "1", "c": ""},
		{"quote\"": "back\\slash", "tab": "a\tb"},
		{"utf8": "héllo", "html": "<a&b>"},
		{"": "empty key"},
	} {
		got, err := json.Marshal(provider.Headers(h))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(h)
		if string(got) != string(want) {
			t.Errorf("%v: encoded %s, encoding/json %s", h, got, want)
		}
		var back provider.Headers
		if err := json.Unmarshal(got, &back); err != nil || !maps.Equal(back, provider.Headers(h)) {
			t.Errorf("%s: decoded %v (%v)", got, back, err)
		}
	}
}

func TestHeadersDecodeLikeEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, ` { } `, `{"a":"1"}`, "{ \"a\" :\n\"1\" , \"b\":\"2\" }", `{"a":"1","a":"2"}`,
		`{"a":"\u0041"}`, `{"a":"é"}`, `null`,
		`{"a":1}`, `{"a":"1",}`, `{"a":"1"`, `{"a" "1"}`, `["a"]`, `{"a":"1"} x`, `{"a":null}`, `{a:"1"}`, ``,
	} {
		if diff := decodeDiff(in); diff != "" {
			t.Error(diff)
		}
	}
}

// decodeDiff decodes in as Headers and with encoding/json, and describes
// how the two differ ("" when they agree, errors included).
func decodeDiff(in string) string {
	var want map[string]string
	wantErr := json.Unmarshal([]byte(in), &want)
	var got provider.Headers
	gotErr := json.Unmarshal([]byte(in), &got)
	if (gotErr != nil) != (wantErr != nil) || (wantErr == nil && !maps.Equal(map[string]string(got), want)) {
		return fmt.Sprintf("%q: decoded %v (%v); encoding/json %v (%v)", in, got, gotErr, want, wantErr)
	}
	return ""
}

// Inside an event, headers survive the stored form.
func TestEventHeadersRoundTrip(t *testing.T) {
	ev := provider.Event{Kind: provider.EventActivityScheduled, ID: 3, Name: "Charge",
		Headers: provider.Headers{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "x": "y"}}
	data, err := provider.EncodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	back, err := provider.DecodeEvent(data)
	if err != nil || !maps.Equal(back.Headers, ev.Headers) {
		t.Fatalf("decoded %+v (%v) from %s", back.Headers, err, data)
	}
}

func FuzzHeadersDecode(f *testing.F) {
	for _, seed := range []string{`{"a":"1","b":"2"}`, `{"a":"\n"}`, ` {"a" : "1"} `, `{"a":"1",}`, `{}`, `null`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if diff := decodeDiff(in); diff != "" {
			t.Fatal(diff)
		}
	})
}
