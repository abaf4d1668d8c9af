package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// finalize applies the deletion policy, then lets the object go.
func (r *orchestrationReconciler) finalize(ctx context.Context, o *v1.Orchestration) (reconcile.Result, error) {
	r.activityChecks.forget(o.UID)
	if !controllerutil.ContainsFinalizer(o, instanceFinalizer) {
		return reconcile.Result{}, nil
	}
	retry, err := r.applyDeletionPolicy(ctx, o)
	if err != nil {
		if se, ok := isStoreError(err); ok {
			before := o.Status.DeepCopy()
			setCondition(o, condStoreReachable, metav1.ConditionFalse, se.Reason, "deletion waits: "+se.Error())
			if _, uerr := r.updateStatus(ctx, o, before); uerr != nil {
				return reconcile.Result{}, uerr
			}
			pool := types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.WorkerPool}
			return reconcile.Result{RequeueAfter: r.Stores.RetryAfter(pool)}, nil
		}
		return reconcile.Result{}, err
	}
	if retry > 0 {
		return reconcile.Result{RequeueAfter: retry}, nil
	}
	patch := client.MergeFrom(o.DeepCopy())
	controllerutil.RemoveFinalizer(o, instanceFinalizer)
	if err := r.Client.Patch(ctx, o, patch); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("remove finalizer: %w", err)
	}
	return reconcile.Result{}, nil
}

// applyDeletionPolicy acts on the instance as spec.deletionPolicy says. A
// positive retry means: not done yet, ask again then.
func (r *orchestrationReconciler) applyDeletionPolicy(ctx context.Context, o *v1.Orchestration) (retry time.Duration, err error) {
	policy := o.Spec.DeletionPolicy
	id, claimed := deletionTarget(o)
	if policy == v1.DeletionOrphan || id == "" {
		return 0, nil
	}
	store, err := r.storeFor(ctx, o)
	if se, ok := isStoreError(err); ok && (se.Reason == reasonPoolNotFound || !claimed && se.Reason != reasonStoreUnreachable) {
		// Without its pool (or, for an object that recorded no start, a
		// usable Secret) there is no store to act on; holding the object
		// forever would help nobody.
		if claimed {
			r.Recorder.Eventf(o, nil, "Warning", reasonPoolNotFound, "Delete",
				"deletion policy %s not applied: %s", policy, se.Error())
		}
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	switch policy {
	case v1.DeletionPurge:
		return r.purge(ctx, o, store, id)
	default:
		return r.terminateForDeletion(ctx, o, store, id)
	}
}

// deletionTarget is the instance the deletion policy acts on ("" for none)
// and whether the object's status recorded it. An object with the default
// ID that recorded none may still have started it: the start's status write
// can lose to the delete. That ID is the object's alone, so the policy acts
// on it unless the store refused it to this object. An explicit ID is
// claimed in status before anything starts, so an unclaimed one started
// nothing.
func deletionTarget(o *v1.Orchestration) (id string, claimed bool) {
	if o.Status.InstanceID != "" {
		return o.Status.InstanceID, true
	}
	if o.Spec.InstanceID != "" || isTrue(o, condInstanceIDInUse) {
		return "", false
	}
	return wantedInstanceID(o), false
}

func isTrue(o *v1.Orchestration, typ string) bool {
	c := findCondition(o, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// keepStartOf carries what a reconcile did to the object (its claim, or the
// store's refusal) into a fresh copy that is being deleted: that reconcile's
// status write lost to the delete, and the deletion policy must act on what
// it started.
func keepStartOf(did, fresh *v1.Orchestration) {
	if fresh.Status.InstanceID != "" {
		return
	}
	fresh.Status.InstanceID = did.Status.InstanceID
	if fresh.Status.Phase == "" {
		fresh.Status.Phase = did.Status.Phase
	}
	if c := findCondition(did, condInstanceIDInUse); c != nil {
		setCondition(fresh, c.Type, c.Status, c.Reason, c.Message)
	}
}

// terminateForDeletion applies the Terminate policy to a running instance,
// or to a start still queued (a worker runs it, then the terminate).
func (r *orchestrationReconciler) terminateForDeletion(ctx context.Context, o *v1.Orchestration, store *poolStore, id string) (time.Duration, error) {
	if finished(o.Status.Phase) {
		return 0, nil
	}
	err := r.endInstance(ctx, o, store, id)
	if errors.Is(err, provider.ErrInstanceFinished) || errors.Is(err, provider.ErrNotFound) {
		return 0, nil // ended, gone or never started: nothing to terminate
	}
	if errors.Is(err, runtime.ErrTurnInProgress) {
		return time.Second, nil // a worker's turn holds it: try again once it is done
	}
	if err != nil {
		return 0, fmt.Errorf("terminate instance %q: %w", id, err)
	}
	r.Recorder.Eventf(o, nil, "Normal", "Terminated", "Delete", "terminated instance %q (deletion policy Terminate)", id)
	return 0, nil
}

// endInstance terminates the instance for the object's deletion. When no
// worker will run the terminating turn (the pool is being deleted, as in a
// namespace deletion, or none is live), the operator runs it and the store
// records the end at once; otherwise a worker applies the message.
func (r *orchestrationReconciler) endInstance(ctx context.Context, o *v1.Orchestration, store *poolStore, id string) error {
	reason := "Orchestration " + o.Namespace + "/" + o.Name + " deleted"
	if !r.workersWillCome(ctx, o, store) {
		return store.Client.TerminateNow(ctx, id, reason)
	}
	return store.Client.Terminate(ctx, id, reason)
}

// workersWillCome reports whether a worker can be expected to run the
// instance's next turn: its pool stays and some worker announced itself.
func (r *orchestrationReconciler) workersWillCome(ctx context.Context, o *v1.Orchestration, store *poolStore) bool {
	pool := &v1.WorkerPool{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.WorkerPool}, pool); err != nil ||
		!pool.DeletionTimestamp.IsZero() {
		return false
	}
	workers, ok := store.liveWorkers(ctx)
	return !ok || len(workers) > 0
}

// purge deletes the instance, its children and their history, terminating it
// first when running. An instance whose first turn has not run yet does not
// exist to delete: it is terminated, and the purge waits until a worker has
// recorded it, lest its queued start create it after the delete.
func (r *orchestrationReconciler) purge(ctx context.Context, o *v1.Orchestration, store *poolStore, id string) (time.Duration, error) {
	res, err := store.Client.Delete(ctx, id, true)
	if errors.Is(err, provider.ErrNotFound) {
		if o.Status.Phase != v1.PhasePending && o.Status.Phase != "" {
			return 0, nil // seen in the store before, gone now: purged already
		}
		// Only a queued start: record the instance as terminated (the
		// operator runs that turn), then purge it on the next pass.
		terr := store.Client.TerminateNow(ctx, id, "Orchestration "+o.Namespace+"/"+o.Name+" deleted")
		if errors.Is(terr, provider.ErrNotFound) {
			return 0, nil // no instance and no queued start: nothing to purge
		}
		if terr != nil && !errors.Is(terr, provider.ErrInstanceFinished) && !errors.Is(terr, runtime.ErrTurnInProgress) {
			return 0, fmt.Errorf("terminate instance %q: %w", id, terr)
		}
		return 100 * time.Millisecond, nil
	}
	if err != nil {
		return 0, fmt.Errorf("purge instance %q: %w", id, err)
	}
	r.Recorder.Eventf(o, nil, "Normal", "Purged", "Delete", "purged instance %q: %d instances, %d history events",
		id, res.InstancesDeleted, res.EventsDeleted)
	return 0, nil
}

// expireAfterTTL deletes a finished Orchestration once its TTL has passed
// (its deletion policy then applies), or asks to be called back then.
func (r *orchestrationReconciler) expireAfterTTL(ctx context.Context, o *v1.Orchestration) (reconcile.Result, error) {
	ttl := o.Spec.TTLSecondsAfterFinished
	if ttl == nil || o.Status.CompletionTime == nil {
		return reconcile.Result{}, nil
	}
	// CompletionTime keeps whole seconds (cut, not rounded): the extra second
	// makes sure the object never goes before its TTL has passed.
	left := time.Until(o.Status.CompletionTime.Add(time.Duration(*ttl)*time.Second + time.Second))
	if left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	if err := r.Client.Delete(ctx, o, client.Preconditions{UID: &o.UID}); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("delete after TTL: %w", err)
	}
	r.Recorder.Eventf(o, nil, "Normal", "Expired", "Delete", "deleted %ds after the instance finished", *ttl)
	return reconcile.Result{}, nil
}
