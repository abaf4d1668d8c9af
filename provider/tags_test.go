package provider

import "testing"

func TestParseTagFilter(t *testing.T) {
	for _, c := range []struct {
		in, want     string // want: String() of the filter, or "error"
		takes, skips []string
	}{
		{in: "", want: "", takes: []string{""}, skips: []string{"gpu"}},
		{in: "gpu", want: "gpu", takes: []string{"gpu"}, skips: []string{"", "ml"}},
		{in: " gpu , ml,gpu", want: "gpu,ml", takes: []string{"gpu", "ml"}, skips: []string{""}},
		{in: "-,gpu", want: "-,gpu", takes: []string{"", "gpu"}, skips: []string{"ml"}},
		{in: "-", want: "", takes: []string{""}, skips: []string{"gpu"}},
		{in: "gpu,*", want: "*", takes: []string{"", "gpu", "ml"}},
		{in: "a b", want: "error"},
		{in: "gpu,-x", want: "error"},
	} {
		f, err := ParseTagFilter(c.in)
		if c.want == "error" {
			if err == nil {
				t.Errorf("ParseTagFilter(%q) = %+v, want an error", c.in, f)
			}
			continue
		}
		if err != nil || f.String() != c.want {
			t.Errorf("ParseTagFilter(%q) = %q, %v; want %q", c.in, f.String(), err, c.want)
		}
		for _, tag := range c.takes {
			if !f.Matches(tag) {
				t.Errorf("%q does not take tag %q", c.in, tag)
			}
		}
		for _, tag := range c.skips {
			if f.Matches(tag) {
				t.Errorf("%q takes tag %q", c.in, tag)
			}
		}
	}
}

func TestValidateTag(t *testing.T) {
	long := make([]byte, MaxTagLength+1)
	for i := range long {
		long[i] = 'a'
	}
	for tag, ok := range map[string]bool{
		"gpu": true, "gpu-a100": true, "eu.west_1": true, "A1": true, "x": true, string(long[:MaxTagLength]): true,
		"": false, "-gpu": false, "gpu-": false, "a b": false, "a/b": false, "*": false, "é": false, string(long): false,
	} {
		if err := ValidateTag(tag); (err == nil) != ok {
			t.Errorf("ValidateTag(%q) = %v, want ok=%v", tag, err, ok)
		}
	}
}
