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
		if strings.Count(msg, "dial error") > 1 {
			t.Errorf("%s: the same cause said more than once (one per connection attempt): %s", name, msg)
		}
	}
}

// A store string in an error or a log keeps everything but its passwords,
// whatever its form, however malformed.
func TestRedactConnString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:s3cret@h:5432/db?sslmode=require", "postgres://u:xxxxx@h:5432/db?sslmode=require"},
		{"POSTGRESQL://u:s3cret@h/db", "POSTGRESQL://u:xxxxx@h/db"},
		{" postgres://u:s3cret@h/db", "postgres://u:xxxxx@h/db"},
		{"pg://u:s3cret@h/db", "pg://u:xxxxx@h/db"},
		{"mysql://u:s3cret@h/db", "mysql://u:xxxxx@h/db"},
		{"postgres://u:@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"postgres://h/db?application_name=a@b", "postgres://h/db?application_name=a@b"},
		{"postgres://u:s3c/ret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:s3c?ret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:s3c@ret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:s3c:ret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u@h/db?sslmode=require&password=s3cret", "postgres://u@h/db?sslmode=require&password=xxxxx"},
		{"postgres://u@h/db?PASSWORD=s3cret&x=1", "postgres://u@h/db?PASSWORD=xxxxx&x=1"},
		{"postgres://u@h/db?pass%77ord=s3cret", "postgres://u@h/db?pass%77ord=xxxxx"},
		{"postgres://u@h/db?sslpassword=s3cret", "postgres://u@h/db?sslpassword=xxxxx"},
		{"postgres://u@h/db?password=s3c@ret", "postgres://u@h/db?password=xxxxx"},
		{"postgres://u:s3cret@h/db?application_name=a@b", "postgres://u:xxxxx@b"},
		{"postgres://h/db?x=1&password=s3c@ret", "postgres://h/db?x=1&password=xxxxx"},
		{"postgres://h:5432/db?password=s3c@ret", "postgres://h:xxxxx@ret"},
		{"host=h password=s3cret dbname=d", "host=h password=xxxxx dbname=d"},
		{"host=h password = s3cret dbname=d", "host=h password = xxxxx dbname=d"},
		{"host=h password='s3 cret' dbname=d", "host=h password=xxxxx dbname=d"},
		{`host=h password='s3\'cret' dbname=d`, "host=h password=xxxxx dbname=d"},
		{`host=h password=s3\ cret dbname=d`, "host=h password=xxxxx dbname=d"},
		{"host=h password='s3 cret dbname=d", "host=h password=xxxxx"},
		{"host=h sslpassword=s3cret", "host=h sslpassword=xxxxx"},
		{"host=h PASSWORD=s3cret", "host=h PASSWORD=xxxxx"},
		{"host=h options='-c password=x' dbname=d", "host=h options='-c password=x' dbname=d"},
		{"/var/lib/duroxide/store.db", "/var/lib/duroxide/store.db"},
		{"/data/store.db?mode=ro&password=s3cret", "/data/store.db?mode=ro&password=xxxxx"},
		{"/data/mypassword=s3cret.db", "/data/mypassword=s3cret.db"},
		{"sqlite:store.db", "sqlite:store.db"},
		{"", ""},
	} {
		if got := RedactConnString(tc.in); got != tc.want {
			t.Errorf("RedactConnString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
