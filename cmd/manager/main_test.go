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
