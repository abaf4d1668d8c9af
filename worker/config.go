// Package worker turns a registry of orchestrations and activities into a
// worker process for a WorkerPool: it reads the pool's settings from the
// environment the operator sets, runs the dispatchers on the pool's
// PostgreSQL store, serves health, readiness and Prometheus metrics, and
// drains on SIGTERM.
//
//	reg := runtime.NewRegistry()
//	myapp.Register(reg)
//	cfg, err := worker.ConfigFromEnv(os.Getenv)
//	...
//	err = worker.Run(ctx, reg, cfg, logger)
package worker

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
)

// Environment variables a WorkerPool sets on its pods.
const (
	EnvPool                     = "DUROXIDE_POOL"
	EnvPostgresURL              = "DUROXIDE_POSTGRES_URL"
	EnvPostgresSchema           = "DUROXIDE_POSTGRES_SCHEMA"
	EnvOrchestrationConcurrency = "DUROXIDE_ORCHESTRATION_CONCURRENCY"
	EnvActivityConcurrency      = "DUROXIDE_ACTIVITY_CONCURRENCY"
	EnvLockTimeout              = "DUROXIDE_LOCK_TIMEOUT"
	EnvDrainTimeout             = "DUROXIDE_DRAIN_TIMEOUT"
	EnvHealthAddr               = "DUROXIDE_HEALTH_ADDR"
	EnvMetricsAddr              = "DUROXIDE_METRICS_ADDR"
	EnvWorkerID                 = "DUROXIDE_WORKER_ID"
	// EnvActivityTags is the tag filter of the worker's activity fetches,
	// in runtime.ParseTagFilter's form ("gpu", "-,gpu", "*").
	EnvActivityTags = "DUROXIDE_ACTIVITY_TAGS"
	// EnvMaxSessions, EnvSessionLockTimeout and EnvSessionIdleTimeout bound
	// the activity sessions (runtime.WithSession) the worker owns; set them
	// through the pool's spec.podTemplate.env. EnvMaxSessions takes a
	// positive number, or -1 for a worker that runs no session's activities.
	EnvMaxSessions        = "DUROXIDE_MAX_SESSIONS"
	EnvSessionLockTimeout = "DUROXIDE_SESSION_LOCK_TIMEOUT"
	EnvSessionIdleTimeout = "DUROXIDE_SESSION_IDLE_TIMEOUT"
)

// Config is a worker's settings.
type Config struct {
	Pool     string
	WorkerID string
	// PostgresURL is the store's connection string; it is never logged.
	PostgresURL string
	Schema      string
	// OrchestrationConcurrency and ActivityConcurrency: 0 takes the runtime's defaults.
	OrchestrationConcurrency int
	ActivityConcurrency      int
	// ActivityTags says which activities the worker runs by tag (zero:
	// untagged ones).
	ActivityTags provider.TagFilter
	// MaxSessions, SessionLockTimeout and SessionIdleTimeout: 0 takes the
	// runtime's defaults; MaxSessions -1 owns no session.
	MaxSessions        int
	SessionLockTimeout time.Duration
	SessionIdleTimeout time.Duration
	// LockTimeout is the lease of a turn or an activity (0: the runtime's default).
	LockTimeout time.Duration
	// DrainTimeout is how long in-flight activities may finish after SIGTERM
	// before they are handed back to the store for another worker (default 20s,
	// inside the pod's 30s grace period).
	DrainTimeout time.Duration
	// HealthAddr serves /healthz and /readyz (default ":8081"); MetricsAddr
	// serves /metrics (default ":9090"; "0" disables it).
	HealthAddr  string
	MetricsAddr string
}

// ConfigFromEnv reads the settings from the environment (getenv is usually
// os.Getenv). Every problem is reported, each naming its variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Pool: getenv(EnvPool), WorkerID: getenv(EnvWorkerID), PostgresURL: getenv(EnvPostgresURL),
		Schema: getenv(EnvPostgresSchema), HealthAddr: getenv(EnvHealthAddr), MetricsAddr: getenv(EnvMetricsAddr),
	}
	var errs []error
	if c.PostgresURL == "" {
		errs = append(errs, fmt.Errorf("%s is not set: the worker needs the store's connection string", EnvPostgresURL))
	}
	if c.Schema == "" {
		c.Schema = postgres.DefaultSchema
	}
	if err := postgres.ValidateSchema(c.Schema); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvPostgresSchema, err))
	}
	c.OrchestrationConcurrency = positiveInt(getenv, EnvOrchestrationConcurrency, &errs)
	c.ActivityConcurrency = positiveInt(getenv, EnvActivityConcurrency, &errs)
	c.LockTimeout = positiveDuration(getenv, EnvLockTimeout, &errs)
	c.DrainTimeout = positiveDuration(getenv, EnvDrainTimeout, &errs)
	tags, err := provider.ParseTagFilter(getenv(EnvActivityTags))
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvActivityTags, err))
	}
	c.ActivityTags = tags
	c.MaxSessions = maxSessions(getenv, &errs)
	c.SessionLockTimeout = positiveDuration(getenv, EnvSessionLockTimeout, &errs)
	c.SessionIdleTimeout = positiveDuration(getenv, EnvSessionIdleTimeout, &errs)
	return c.withDefaults(), errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.HealthAddr == "" {
		c.HealthAddr = ":8081"
	}
	if c.MetricsAddr == "" {
		c.MetricsAddr = ":9090"
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = 20 * time.Second
	}
	return c
}

// maxSessions reads EnvMaxSessions: a positive number, or -1 for none.
func maxSessions(getenv func(string) string, errs *[]error) int {
	if getenv(EnvMaxSessions) == "-1" {
		return -1
	}
	return positive(getenv, EnvMaxSessions, strconv.Atoi, "a positive integer, or -1 for no sessions", errs)
}

func positiveInt(getenv func(string) string, name string, errs *[]error) int {
	return positive(getenv, name, strconv.Atoi, "a positive integer", errs)
}

func positiveDuration(getenv func(string) string, name string, errs *[]error) time.Duration {
	return positive(getenv, name, time.ParseDuration, "a positive duration such as 30s", errs)
}

// positive parses the variable when set; a bad or non-positive value is
// added to errs, naming the variable, and reads as zero (the default).
func positive[T int | time.Duration](getenv func(string) string, name string, parse func(string) (T, error), want string, errs *[]error) T {
	v := getenv(name)
	if v == "" {
		return 0
	}
	n, err := parse(v)
	if err != nil || n <= 0 {
		*errs = append(*errs, fmt.Errorf("%s=%q: want %s", name, v, want))
		return 0
	}
	return n
}
