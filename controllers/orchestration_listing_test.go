package controllers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// What `kubectl get orch -o wide` and `--field-selector status.phase=…`
// show: the table the API server builds from the printer columns, and the
// objects a phase selects (a selectable field: no extra write per phase).
func TestListingShowsPhaseReasonAndTimes(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("listed", "Hello", "table")
	create(t, o)
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	if done.Status.Reason != "Completed" || done.Status.Duration == "" {
		t.Errorf("status reason %q duration %q", done.Status.Reason, done.Status.Duration)
	}
	running := p.orchestration("running", "Tally", []string{"never"})
	create(t, running)
	waitFor(t, key(running), "Running", phaseIs(v1.PhaseRunning))
	for phase, want := range map[string]string{"Completed": "listed", "Running": "running"} {
		var selected v1.OrchestrationList
		if err := k8s.List(t.Context(), &selected, client.InNamespace(p.ns),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("status.phase", phase)}); err != nil {
			t.Fatal(err)
		}
		if len(selected.Items) != 1 || selected.Items[0].Name != want {
			t.Errorf("status.phase=%s selects %d objects, want %s", phase, len(selected.Items), want)
		}
	}

	table := getTable(t, fmt.Sprintf("/apis/duroxide.io/v1alpha1/namespaces/%s/orchestrations/listed", p.ns))
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	for _, want := range []string{"Phase", "Reason", "Instance", "Started", "Completed", "Duration", "Message"} {
		if !slices.Contains(names, want) {
			t.Errorf("table columns %v lack %s", names, want)
		}
	}
	if len(table.Rows) != 1 {
		t.Fatalf("table rows %d", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	if i := slices.Index(names, "Instance"); i < 0 || cells[i] != done.Status.InstanceID {
		t.Errorf("instance cell %v, want %s", cells, done.Status.InstanceID)
	}
}

// getTable reads path as the API server's Table, as kubectl get does.
func getTable(t *testing.T, path string) *metav1.Table {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, strings.TrimSuffix(restCfg.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatalf("decode table: %v", err)
	}
	return table
}
