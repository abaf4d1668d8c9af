package controllers_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
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
