package postgres

import (
	"errors"
	"strings"
	"testing"
)

// Every form PostgreSQL is given in is recognised as PostgreSQL, and nothing
// that names a file is.
func TestIsConnString(t *testing.T) {
	for s, want := range map[string]bool{
		"postgres://u:p@h/db":              true,
		"postgresql://h/db":                true,
		"POSTGRES://u:p@h/db":              true,
		"PostgreSQL://h/db":                true,
		" postgres://h/db":                 true,
		"pg://h/db":                        true,
		"PG://h/db":                        true,
		"host=h dbname=d":                  true,
		"user = u password=p":              true,
		"  dbname=d":                       true,
		"mysql://u:p@h/db":                 false,
		"/var/lib/duroxide/store.db":       false,
		"store.db":                         false,
		"sqlite:store.db":                  false,
		"./host=h":                         false,
		"C:\\data\\store.db":               false,
		"":                                 false,
		"postgres:/h/db":                   false,
		"data/password=p.db":               false,
		"file:store.db?mode=ro&password=x": false,
	} {
		if got := IsConnString(s); got != want {
			t.Errorf("IsConnString(%q) = %v, want %v", s, got, want)
		}
	}
}

// A connection string that cannot work fails at once with
// ErrInvalidConnString and its cause, never with its password; the scheme's
// letter case does not matter.
func TestParseConnString(t *testing.T) {
	for _, tc := range []struct{ in, cause string }{
		{"postgres://u:s3cret@h/db", ""},
		{"POSTGRES://u:s3cret@h/db", ""},
		{"PostgreSQL://u:s3cret@h/db", ""},
		{"host=h password=s3cret dbname=d", ""},
		{"pg://u:s3cret@h/db", `unsupported scheme "pg": use a postgres:// or postgresql:// URL`},
		{"mysql://u:s3cret@h/db", `unsupported scheme "mysql"`},
		{"postgres://u:s3cret@h:port/db", "invalid port"},
		{"postgres://u:s3c/ret@h/db", "invalid port"},
		{"postgres://u:s3cret@h/db?sslmode=sometimes", "sslmode is invalid"},
		{"postgres://u:s3cret@h/db?connect_timeout=soon", "invalid connect_timeout"},
		{"postgres://u:s3cret@h/db?pool_max_conns=many", "cannot parse pool_max_conns"},
		{"postgres://u:s3%zzcret@h/db", "invalid percent-encoded token in password"},
		{"host=h password='s3cret", "unterminated quoted string"},
		{"host=h password=s3 cret port=1", "failed to parse as keyword/value"},
		{"/var/lib/store.db", "failed to parse as keyword/value"},
	} {
		cfg, err := parseConnString(tc.in)
		if tc.cause == "" {
			if err != nil || cfg.ConnConfig.Password != "s3cret" {
				t.Errorf("%s: %v, want it parsed", tc.in, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidConnString) || !strings.Contains(err.Error(), tc.cause) ||
			strings.Contains(err.Error(), "s3") || strings.Contains(err.Error(), "cret") {
			t.Errorf("%s: error %v, want ErrInvalidConnString naming %q, no part of the password", tc.in, err, tc.cause)
		}
	}
}
