package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"--leader-elect", "--kube-api-qps=50", "--resync=1m", "--max-output-bytes=100",
		"--worker-host-network", "--worker-image-pull-policy=Never"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.leaderElect || o.qps != 50 || o.burst != 400 || o.resync != time.Minute || o.limits.Output != 100 ||
		!o.podDefaults.HostNetwork || o.podDefaults.ImagePullPolicy != "Never" {
		t.Fatalf("parsed %+v", o)
	}
	for _, bad := range [][]string{{"--kube-api-qps=0"}, {"--orchestration-concurrency=-1"}, {"--no-such-flag"}, {"--worker-image-pull-policy=Sometimes"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%s: accepted", strings.Join(bad, " "))
		}
	}
}

// Metrics are served over HTTPS behind the API server's authentication and
// authorization unless --metrics-secure=false.
func TestMetricsOptions(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		secure bool
		addr   string
	}{
		{nil, true, ":8443"},
		{[]string{"--metrics-secure=false", "--metrics-bind-address=:8080"}, false, ":8080"},
	} {
		o, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		m := metricsOptions(o)
		if m.SecureServing != tc.secure || (m.FilterProvider != nil) != tc.secure || m.BindAddress != tc.addr {
			t.Errorf("%v: secure %v, filter %v, address %q; want secure and filtered %v at %q", tc.args, m.SecureServing,
				m.FilterProvider != nil, m.BindAddress, tc.secure, tc.addr)
		}
	}
}
