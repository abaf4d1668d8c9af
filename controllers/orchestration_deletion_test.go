package controllers_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
	"github.com/duroxide/duroxide-go/provider"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

// Objects applied and deleted at once, while a burst of others is being
// applied, leave no instance running without an object: a start in flight
// when the delete arrives is ended by the deletion policy, though its
// status write (the instance ID) lost to the delete.
func TestAppliedAndDeletedAtOnceLeaksNothing(t *testing.T) {
	p := newPool(t)
	const victims, burst = 10, 200
	var wg sync.WaitGroup
	wg.Go(func() { createMany(t, p, burst) })
	ids := make([]string, victims)
	for i := range victims {
		o := p.orchestration(fmt.Sprintf("gone-%02d", i), "Tally", []string{"never"})
		if i%2 == 1 {
			o.Spec.DeletionPolicy = v1.DeletionPurge
		}
		create(t, o)
		ids[i] = p.ns + "/" + o.Name + "/" + string(o.UID)
		if err := k8s.Delete(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	for i := range victims {
		waitGone(t, &v1.Orchestration{ObjectMeta: p.orchestration(fmt.Sprintf("gone-%02d", i), "", nil).ObjectMeta})
	}
	for _, id := range ids {
		if st := settled(t, p, id); st != nil && !st.Finished() {
			t.Errorf("instance %q is %s, its object gone: the deletion policy was not applied", id, st.Status)
		}
	}
}

// settled waits for an instance to finish or go (a queued start or a
// terminate message may still be on its way), and returns its last status
// (nil: not in the store). The wait is long: under the full suite's load the
// pool's workers reach a terminate message queued behind the burst late, and
// a leaked instance never finishes however long the wait.
func settled(t *testing.T, p *testPool, id string) *dxruntime.Status {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := p.client.Status(t.Context(), id)
		if errors.Is(err, provider.ErrNotFound) {
			st = nil
		} else if err != nil {
			t.Fatalf("status of %q: %v", id, err)
		}
		if st == nil || st.Finished() || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An Orchestration that leaves the API server with the finalizer still on
// it, as a delete racing the patch that adds the finalizer can make it
// (kubernetes/kubernetes#77988, seen under load in
// TestAppliedAndDeletedAtOnceLeaksNothing), still has its deletion policy
// applied: the object is removed from etcd directly, as that race ends.
func TestFinalizerBypassedStillAppliesDeletionPolicy(t *testing.T) {
	p := newPool(t)
	terminate := p.orchestration("bypassed-terminate", "Tally", []string{"never"})
	purge := p.orchestration("bypassed-purge", "Tally", []string{"never"})
	purge.Spec.DeletionPolicy = v1.DeletionPurge
	for _, o := range []*v1.Orchestration{terminate, purge} {
		create(t, o)
		o = waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
		if !slices.Contains(o.Finalizers, controllers.Finalizer) {
			t.Fatalf("%s: finalizers %v", o.Name, o.Finalizers)
		}
		removeFromEtcd(t, o)
		waitGone(t, o)
	}
	id := terminate.Namespace + "/" + terminate.Name + "/" + string(terminate.UID)
	if st := settled(t, p, id); st == nil || st.Status != dxruntime.StatusTerminated {
		t.Errorf("instance of %s: %+v, want Terminated", terminate.Name, st)
	}
	id = purge.Namespace + "/" + purge.Name + "/" + string(purge.UID)
	if st := settled(t, p, id); st != nil {
		t.Errorf("instance of %s: %s, want purged", purge.Name, st.Status)
	}
}

// removeFromEtcd deletes an object's key from etcd, past the API server and
// its finalizers, through etcd's JSON gateway.
func removeFromEtcd(t *testing.T, o *v1.Orchestration) {
	t.Helper()
	key := "/registry/duroxide.io/orchestrations/" + o.Namespace + "/" + o.Name
	body, err := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	if err != nil {
		t.Fatal(err)
	}
	url := testEnv.ControlPlane.Etcd.URL.String() + "/v3/kv/deleterange"
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("delete %s from etcd: %v", key, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct {
		Deleted string `json:"deleted"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Deleted != "1" {
		t.Fatalf("delete %s from etcd: HTTP %d, %+v, %v", key, resp.StatusCode, out, err)
	}
}

// A tombstone whose last state claims an instance another object started
// (a stale state: the claim lost, or the ID was taken over since) leaves
// that instance alone: the store's recorded owner is not the tombstone's
// object.
func TestTombstoneLeavesAnotherObjectsInstance(t *testing.T) {
	p := newPool(t)
	owner := p.orchestration("owner", "Tally", []string{"never"})
	owner.Spec.InstanceID = "shared-instance"
	create(t, owner)
	waitFor(t, key(owner), "Running", phaseIs(v1.PhaseRunning))
	stale := p.orchestration("stale", "Tally", []string{"never"})
	stale.Spec.InstanceID = "shared-instance"
	create(t, stale)
	stale = waitFor(t, key(stale), "InstanceIDInUse", conditionIs(controllers.CondInstanceIDInUse, metav1.ConditionTrue, ""))
	changeStatus(t, stale, func() { stale.Status.InstanceID = "shared-instance"; stale.Status.Phase = v1.PhaseRunning })
	removeFromEtcd(t, stale)
	waitGone(t, stale)

	// A terminate would be sent within a reconcile of the tombstone; the
	// wait gives it ample time to show.
	time.Sleep(3 * time.Second)
	st, err := p.client.Status(t.Context(), "shared-instance")
	if err != nil || st.Status != dxruntime.StatusRunning {
		t.Fatalf("the owner's instance after another object's tombstone: %+v, %v; want Running", st, err)
	}
}
