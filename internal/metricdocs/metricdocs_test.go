package metricdocs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/duroxide/duroxide-go/internal/metricdocs"
)

const root = "../.."

// referenced finds metric names in dashboards and alert rules.
var referenced = regexp.MustCompile(`\b(?:duroxide|controller_runtime)_[a-z_]+\b`)

// Every metric the dashboard and the alerts use is documented, and every
// file of config/monitoring is in its kustomization: a renamed metric or a
// forgotten file fails here, not in someone's empty panel.
func TestMonitoringUsesDocumentedMetrics(t *testing.T) {
	documented, err := metricdocs.Documented(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(documented) < 25 {
		t.Fatalf("%s documents %d metrics; the table format changed?", metricdocs.Page, len(documented))
	}
	dir := filepath.Join(root, "config", "monitoring")
	kustomization, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, f := range files {
		if f.Name() == "kustomization.yaml" {
			continue
		}
		if !strings.Contains(string(kustomization), "- "+f.Name()) {
			t.Errorf("config/monitoring/%s is not in its kustomization.yaml", f.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Name(), ".json") {
			var dashboard struct {
				Panels []struct{ Title string } `json:"panels"`
			}
			if err := json.Unmarshal(b, &dashboard); err != nil || len(dashboard.Panels) == 0 {
				t.Errorf("%s: not a dashboard with panels: %v", f.Name(), err)
			}
		}
		for _, name := range referenced.FindAllString(string(b), -1) {
			used[metricdocs.Family(name)] = true
			if !documented[metricdocs.Family(name)] {
				t.Errorf("%s uses %s, which %s does not document", f.Name(), name, metricdocs.Page)
			}
		}
	}
	for _, want := range []string{"duroxide_store_backlog_oldest_age_seconds", "duroxide_store_instances", "duroxide_poison_total"} {
		if !used[want] {
			t.Errorf("config/monitoring never uses %s", want)
		}
	}
	t.Logf("config/monitoring uses %d of the %d documented metrics", len(used), len(documented))
	var unused []string
	for name := range documented {
		if !used[name] {
			unused = append(unused, name)
		}
	}
	slices.Sort(unused)
	t.Logf("not on the dashboard or in an alert: %v", unused)
}
