// Package metricdocs reads the metric names docs/observability.md
// documents, for the tests that keep that page, the dashboards and alerts
// in config/monitoring, and what the worker and the operator export in
// step. It imports the standard library only.
package metricdocs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Page is the documentation page, relative to the repository root.
const Page = "docs/observability.md"

// tableName is a metric's name in the first column of one of the page's tables.
var tableName = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|")

// Documented returns the metric names the page's tables list. root is the
// repository root.
func Documented(root string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(root, Page))
	if err != nil {
		return nil, fmt.Errorf("read the metrics page: %w", err)
	}
	names := map[string]bool{}
	for _, m := range tableName.FindAllSubmatch(b, -1) {
		names[string(m[1])] = true
	}
	return names, nil
}

// Family is the metric a series name belongs to: a histogram's _bucket,
// _sum and _count series belong to the histogram.
func Family(series string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(series, suffix); ok {
			return base
		}
	}
	return series
}

// Value is the value of the family's first sample whose labels include
// labels: a counter's or a gauge's value, a histogram's count. ok is false
// when no sample has them (or f is nil).
func Value(f *dto.MetricFamily, labels map[string]string) (v float64, ok bool) {
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.Label {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}
