package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// condInstanceIDInUse is True while the instance ID an Orchestration would
// start belongs to another Orchestration, or to an instance already in the
// store that spec.idReusePolicy does not let it replace: nothing was started
// for this object, and its deletion policy touches nothing.
const condInstanceIDInUse = "InstanceIDInUse"

// instanceID is the store ID of the Orchestration's instance: the one it
// claimed, or the one it would claim.
func instanceID(o *v1.Orchestration) string {
	if o.Status.InstanceID != "" {
		return o.Status.InstanceID
	}
	return wantedInstanceID(o)
}

// wantedInstanceID is spec.instanceID or, by default, an ID no other object
// can have: one object, one run, even when a deleted name is applied again.
func wantedInstanceID(o *v1.Orchestration) string {
	if o.Spec.InstanceID != "" {
		return o.Spec.InstanceID
	}
	return o.Namespace + "/" + o.Name + "/" + string(o.UID)
}

// ownerOf names an Orchestration as the instance records its owner.
func ownerOf(o *v1.Orchestration) string {
	return fmt.Sprintf("Orchestration %s/%s (uid %s)", o.Namespace, o.Name, o.UID)
}

// errIDInUse stops a reconcile whose object may not use its instance ID.
var errIDInUse = errors.New("instance ID in use")

// claimInstanceID records in status the instance ID the object will start.
// An explicit ID is checked first against the other Orchestrations and the
// store (an instance the store records this object as the owner of is its
// own, whatever other objects claim), and the claim must be written before
// the start (claimed is true: write the status, then come back), so that a
// start repeated after a lost status write is never mistaken for somebody
// else's instance.
func (r *orchestrationReconciler) claimInstanceID(ctx context.Context, o *v1.Orchestration, store *poolStore) (claimed bool, err error) {
	id := wantedInstanceID(o)
	if o.Spec.InstanceID == "" {
		o.Status.InstanceID = id
		return false, nil
	}
	holder, err := r.otherHolder(ctx, o, id)
	if err != nil {
		return false, err
	}
	inStore, mine, err := storeHolder(ctx, store, id, reusePolicyOf(o), ownerOf(o))
	switch {
	case err != nil:
		return false, err
	case holder != "" && !mine:
		return false, r.idInUse(o, id, holder, nil)
	case inStore != "":
		return false, r.idInUse(o, id, inStore, nil)
	}
	o.Status.InstanceID = id
	o.Status.Phase = v1.PhasePending
	setCondition(o, condInstanceIDInUse, metav1.ConditionFalse, "Claimed", fmt.Sprintf("instance ID %q is this object's", id))
	return true, nil
}

// keepClaim re-checks a claimed explicit ID against Orchestrations that
// claimed it at the same time (their caches had not seen each other yet):
// the object the store records as the instance's owner keeps it; before
// either started, the older object keeps it and the younger gives it up.
func (r *orchestrationReconciler) keepClaim(ctx context.Context, o *v1.Orchestration, store *poolStore) error {
	if o.Spec.InstanceID == "" {
		return nil
	}
	holder, err := r.otherHolder(ctx, o, o.Status.InstanceID)
	if err != nil || holder == "" {
		return err
	}
	if _, mine, err := storeHolder(ctx, store, o.Status.InstanceID, reusePolicyOf(o), ownerOf(o)); err != nil || mine {
		return err
	}
	o.Status.InstanceID, o.Status.InputDigest = "", ""
	o.Status.Phase = v1.PhasePending
	return r.idInUse(o, o.Spec.InstanceID, holder, nil)
}

// otherHolder names another Orchestration of the pool that holds id or has
// the better right to it: one that claimed it, or, when neither did, the
// older one.
func (r *orchestrationReconciler) otherHolder(ctx context.Context, o *v1.Orchestration, id string) (string, error) {
	var list v1.OrchestrationList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.Namespace),
		client.MatchingFields{indexInstance: instanceKey(o.Spec.WorkerPool, id)}); err != nil {
		return "", fmt.Errorf("list Orchestrations using instance ID %q: %w", id, err)
	}
	mine := o.Status.InstanceID == id
	for i := range list.Items {
		other := &list.Items[i]
		if other.UID == o.UID {
			continue
		}
		theirs := other.Status.InstanceID == id
		if (theirs && !mine) || (theirs == mine && olderThan(other, o)) {
			return "Orchestration " + other.Name, nil
		}
	}
	return "", nil
}

func olderThan(a, b *v1.Orchestration) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.UID < b.UID
}

// reusePolicyOf is the object's ID-reuse policy as the runtime names it
// (the same words; the API server allows no others).
func reusePolicyOf(o *v1.Orchestration) runtime.IDReusePolicy {
	return runtime.IDReusePolicy(o.Spec.IDReusePolicy)
}

// storeHolder says what already uses id in the store and may not be
// replaced under reuse: an instance (with its owner when one was recorded)
// or a queued start. An instance the store records self as the owner of is
// mine: its starter's claim, whatever other objects claim. The store checks
// again when the instance starts.
func storeHolder(ctx context.Context, store *poolStore, id string, reuse runtime.IDReusePolicy, self string) (holder string, mine bool, err error) {
	st, err := store.Client.Status(ctx, id)
	if errors.Is(err, provider.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if st.Status == runtime.StatusPending {
		if replaceable(st, reuse) {
			return "", false, nil
		}
		return storeHolderOf("", "", ""), false, nil
	}
	owner, err := store.Client.Owner(ctx, id)
	if err != nil {
		owner = ""
	}
	switch {
	case owner != "" && owner == self:
		return "", true, nil
	case replaceable(st, reuse):
		return "", false, nil
	}
	why := ""
	if st.ParentInstance != "" {
		why = fmt.Sprintf("a sub-orchestration of %q, never replaced", st.ParentInstance)
	}
	return storeHolderOf(provider.ExecutionStatus(st.Status), owner, why), false, nil
}

// replaceable reports whether a start under reuse would replace the
// instance st describes: a root instance, finished for AllowFinished.
func replaceable(st *runtime.Status, reuse runtime.IDReusePolicy) bool {
	switch {
	case st.ParentInstance != "":
		return false
	case reuse == runtime.IDReuseTerminateRunning:
		return true
	case reuse == runtime.IDReuseAllowFinished:
		return st.Finished()
	}
	return false
}

// storeHolderOf names what holds an ID in the store: a queued start (status
// ""), or an instance in status, with its owner and why it is not replaced
// when known.
func storeHolderOf(status provider.ExecutionStatus, owner, why string) string {
	if status == "" {
		return "a start queued in the store"
	}
	details := []string{string(status)}
	if owner != "" {
		details = append(details, "started by "+owner)
	}
	if why != "" {
		details = append(details, why)
	}
	return fmt.Sprintf("an instance in the store (%s)", strings.Join(details, ", "))
}

// idInUse records the clash; a store error is left to the caller's retry.
func (r *orchestrationReconciler) idInUse(o *v1.Orchestration, id, holder string, err error) error {
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("instance ID %q is used by %s; nothing was started for this object: "+
		"delete the other user, let spec.idReusePolicy replace an instance in the store, "+
		"or choose another spec.instanceID (recreate the object)", id, holder)
	if c := findCondition(o, condInstanceIDInUse); c == nil || c.Status != metav1.ConditionTrue {
		r.Recorder.Eventf(o, nil, "Warning", condInstanceIDInUse, "Start", "%s", msg)
	}
	setCondition(o, condInstanceIDInUse, metav1.ConditionTrue, condInstanceIDInUse, msg)
	if o.Status.Phase == "" {
		o.Status.Phase = v1.PhasePending
	}
	return errIDInUse
}
