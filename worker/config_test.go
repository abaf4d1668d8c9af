package worker

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{
		EnvPostgresURL: "postgres://u:p@h/db", EnvPostgresSchema: "pool_a", EnvOrchestrationConcurrency: "4",
		EnvLockTimeout: "45s", EnvHealthAddr: "127.0.0.1:1", EnvPool: "a", EnvWorkerID: "a-0", EnvActivityTags: "-, gpu",
		EnvMaxSessions: "3", EnvSessionLockTimeout: "1m", EnvSessionIdleTimeout: "90s"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Schema != "pool_a" || c.OrchestrationConcurrency != 4 || c.ActivityConcurrency != 0 || c.LockTimeout != 45*time.Second ||
		c.HealthAddr != "127.0.0.1:1" || c.MetricsAddr != ":9090" || c.DrainTimeout != 20*time.Second || c.Pool != "a" {
		t.Fatalf("config %+v", c)
	}
	if c.MaxSessions != 3 || c.SessionLockTimeout != time.Minute || c.SessionIdleTimeout != 90*time.Second {
		t.Errorf("sessions: max %d, lock %v, idle %v", c.MaxSessions, c.SessionLockTimeout, c.SessionIdleTimeout)
	}
	if d, _ := ConfigFromEnv(env(map[string]string{EnvPostgresURL: "x", EnvMaxSessions: "-1"})); d.MaxSessions != -1 {
		t.Errorf("%s=-1 read as %d", EnvMaxSessions, d.MaxSessions)
	}
	if !c.ActivityTags.Matches("gpu") || !c.ActivityTags.Matches("") || c.ActivityTags.Matches("ml") {
		t.Errorf("activity tags %+v from %q", c.ActivityTags, "-, gpu")
	}
	if d, _ := ConfigFromEnv(env(map[string]string{EnvPostgresURL: "x"})); d.Schema != "duroxide" {
		t.Errorf("default schema %q", d.Schema)
	}
}

func TestConfigFromEnvReportsEveryProblem(t *testing.T) {
	_, err := ConfigFromEnv(env(map[string]string{EnvPostgresSchema: "Bad-Name", EnvActivityConcurrency: "0",
		EnvLockTimeout: "soon", EnvDrainTimeout: "-1s", EnvActivityTags: "gpu,a b",
		EnvMaxSessions: "0", EnvSessionLockTimeout: "0s", EnvSessionIdleTimeout: "later"}))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, name := range []string{EnvPostgresURL, EnvPostgresSchema, EnvActivityConcurrency, EnvLockTimeout, EnvDrainTimeout, EnvActivityTags,
		EnvMaxSessions, EnvSessionLockTimeout, EnvSessionIdleTimeout} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}
