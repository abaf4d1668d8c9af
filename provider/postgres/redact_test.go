package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Connection errors, however they reach the caller (Open, or a call made
// while the server is down), name the server's address and the cause, never
// the user or database of the connection string, nor its password.
func TestConnectionErrorsKeepCredentialsOut(t *testing.T) {
	const url = "postgres://dxuser:s3cret@127.0.0.1:1/mydb?connect_timeout=1"
	_, connErr := pgx.Connect(t.Context(), url)
	if connErr == nil {
		t.Fatal("connected to port 1")
	}
	_, openErr := Open(t.Context(), url, Options{})
	for name, err := range map[string]error{"a call while down": classify("fetch work item", "", connErr), "Open": openErr} {
		msg := err.Error()
		for _, secret := range []string{"dxuser", "mydb", "s3cret"} {
			if strings.Contains(msg, secret) {
				t.Errorf("%s: error names %q: %s", name, secret, msg)
			}
		}
		if !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "connect") {
			t.Errorf("%s: error %q should name the server and the cause", name, msg)
		}
		if strings.Contains(msg, "migrate") {
			t.Errorf("%s: an unreachable server reported as a migration failure: %s", name, msg)
		}
	}
}
