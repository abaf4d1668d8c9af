package controllers

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// Ready means the pool can run work: at least one available worker and a
// reachable store. A pool scaled to 0 is not Ready, whatever its store says.
func TestReadyCondition(t *testing.T) {
	reachable := metav1.Condition{Type: condStoreReachable, Status: metav1.ConditionTrue, Reason: "Connected"}
	unreachable := metav1.Condition{Type: condStoreReachable, Status: metav1.ConditionFalse, Reason: reasonSecretNotFound,
		Message: "secret ns/pg (the store's connection string) not found"}
	for _, tc := range []struct {
		name       string
		replicas   *int32
		available  int32
		store      *metav1.Condition
		status     metav1.ConditionStatus
		reason     string
		messageHas string
	}{
		{"scaled to zero", ptr.To[int32](0), 0, &reachable, metav1.ConditionFalse, reasonScaledToZero, "scaled to 0 replicas"},
		{"scaled to zero, old workers still up", ptr.To[int32](0), 2, &reachable, metav1.ConditionFalse, reasonScaledToZero, "--replicas=N"},
		{"scaled to zero, store unreachable", ptr.To[int32](0), 0, &unreachable, metav1.ConditionFalse, reasonScaledToZero, "scaled to 0"},
		{"no worker available yet", ptr.To[int32](3), 0, &reachable, metav1.ConditionFalse, reasonNoAvailableWorkers, "0 of 3 workers available"},
		{"default replicas, none available", nil, 0, &reachable, metav1.ConditionFalse, reasonNoAvailableWorkers, "0 of 1 workers available"},
		{"store not checked yet", ptr.To[int32](1), 1, nil, metav1.ConditionFalse, reasonStoreNotChecked, "not been checked"},
		{"store unreachable", ptr.To[int32](1), 1, &unreachable, metav1.ConditionFalse, reasonSecretNotFound, "not found"},
		{"one of three available", ptr.To[int32](3), 1, &reachable, metav1.ConditionTrue, "Ready", "1 of 3 workers available and the store is reachable"},
		{"all available", nil, 1, &reachable, metav1.ConditionTrue, "Ready", "1 of 1 workers available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Generation: 4}, Spec: v1.WorkerPoolSpec{Replicas: tc.replicas}}
			if tc.store != nil {
				pool.Status.Conditions = []metav1.Condition{*tc.store}
			}
			got := readyCondition(pool, tc.available)
			if got.Type != condReady || got.Status != tc.status || got.Reason != tc.reason ||
				!strings.Contains(got.Message, tc.messageHas) || got.ObservedGeneration != 4 {
				t.Errorf("Ready = %s %s %q (generation %d); want %s %s, message containing %q",
					got.Status, got.Reason, got.Message, got.ObservedGeneration, tc.status, tc.reason, tc.messageHas)
			}
		})
	}
}
