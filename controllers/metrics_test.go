package controllers

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// A status write is measured once per phase change: its lag from the
// store's change, and for the first phase past Pending the start latency.
func TestObserveStatusWrite(t *testing.T) {
	created := time.Unix(1_800_000_000, 0)
	started := created.Add(2 * time.Second)
	done := started.Add(time.Minute)
	for _, tc := range []struct {
		name              string
		before, phase     v1.OrchestrationPhase
		now               time.Time
		wantLag, wantWait float64 // -1: not observed
		lagPhase          string
	}{
		{"pending to running", v1.PhasePending, v1.PhaseRunning, started.Add(300 * time.Millisecond), 0.3, 2, "Running"},
		{"running to completed", v1.PhaseRunning, v1.PhaseCompleted, done.Add(time.Second), 1, -1, "Completed"},
		{"new object straight to completed", "", v1.PhaseCompleted, done.Add(time.Second), 1, 2, "Completed"},
		{"no phase change", v1.PhaseRunning, v1.PhaseRunning, done, -1, -1, "Running"},
		{"stalled to running", v1.PhaseStalled, v1.PhaseRunning, done, -1, -1, "Running"},
		{"running to stalled", v1.PhaseRunning, v1.PhaseStalled, done, -1, -1, "Stalled"},
		{"still pending", "", v1.PhasePending, done, -1, -1, "Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newStatusMetrics()
			o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}}
			o.Status.Phase, o.Status.StartTime = tc.phase, &metav1.Time{Time: started}
			if finished(tc.phase) {
				o.Status.CompletionTime = &metav1.Time{Time: done}
			}
			countBefore, sumBefore := histogramOf(t, m.startLatency)
			m.observeStatusWrite(o, tc.before, tc.now)
			lagCount, lagSum := histogramOf(t, m.statusLag.WithLabelValues(tc.lagPhase))
			switch {
			case tc.wantLag < 0 && lagCount != 0:
				t.Errorf("lag observed %d times, want none", lagCount)
			case tc.wantLag >= 0 && (lagCount != 1 || !near(lagSum, tc.wantLag)):
				t.Errorf("lag: %d observations summing %v, want one of %v", lagCount, lagSum, tc.wantLag)
			}
			count, sum := histogramOf(t, m.startLatency)
			switch {
			case tc.wantWait < 0 && count != countBefore:
				t.Errorf("start latency observed, want not")
			case tc.wantWait >= 0 && (count != countBefore+1 || !near(sum-sumBefore, tc.wantWait)):
				t.Errorf("start latency: %d new observations adding %v, want one of %v", count-countBefore, sum-sumBefore, tc.wantWait)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// histogramOf reads a histogram's observation count and sum.
func histogramOf(t *testing.T, o prometheus.Observer) (uint64, float64) {
	t.Helper()
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}
