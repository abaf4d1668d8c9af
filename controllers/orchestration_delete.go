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
)

// finalize applies the deletion policy, then lets the object go.
func (r *OrchestrationReconciler) finalize(ctx context.Context, o *v1.Orchestration) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(o, Finalizer) {
		return reconcile.Result{}, nil
	}
	retry, err := r.applyDeletionPolicy(ctx, o)
	if err != nil {
		if se, ok := isStoreError(err); ok {
			before := o.Status.DeepCopy()
			setCondition(o, CondStoreReachable, metav1.ConditionFalse, se.Reason, "deletion waits: "+se.Error())
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
	controllerutil.RemoveFinalizer(o, Finalizer)
	if err := r.Client.Patch(ctx, o, patch); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("remove finalizer: %w", err)
	}
	return reconcile.Result{}, nil
}

// applyDeletionPolicy acts on the instance as spec.deletionPolicy says. A
// positive retry means: not done yet, ask again then.
func (r *OrchestrationReconciler) applyDeletionPolicy(ctx context.Context, o *v1.Orchestration) (retry time.Duration, err error) {
	policy := o.Spec.DeletionPolicy
	if policy == v1.DeletionOrphan || o.Status.InstanceID == "" {
		return 0, nil
	}
	store, err := r.storeFor(ctx, o)
	if se, ok := isStoreError(err); ok && se.Reason == ReasonPoolNotFound {
		// Without its pool there is no store to act on; holding the object
		// forever would help nobody.
		r.Recorder.Eventf(o, nil, "Warning", ReasonPoolNotFound, "Delete",
			"deletion policy %s not applied: %s", policy, se.Error())
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	id := o.Status.InstanceID
	switch policy {
	case v1.DeletionPurge:
		return r.purge(ctx, o, store)
	default:
		if finished(o.Status.Phase) {
			return 0, nil
		}
		err := store.Client.Terminate(ctx, id, "Orchestration "+o.Namespace+"/"+o.Name+" deleted")
		if errors.Is(err, provider.ErrInstanceFinished) || errors.Is(err, provider.ErrNotFound) {
			return 0, nil // ended or gone already: nothing to terminate
		}
		if err != nil {
			return 0, fmt.Errorf("terminate instance %q: %w", id, err)
		}
		r.Recorder.Eventf(o, nil, "Normal", "Terminated", "Delete", "terminated instance %q (deletion policy Terminate)", id)
		return 0, nil
	}
}

// purge deletes the instance, its children and their history, terminating it
// first when running. An instance whose first turn has not run yet does not
// exist to delete: it is terminated, and the purge waits until a worker has
// recorded it, lest its queued start create it after the delete.
func (r *OrchestrationReconciler) purge(ctx context.Context, o *v1.Orchestration, store *Store) (time.Duration, error) {
	id := o.Status.InstanceID
	res, err := store.Client.Delete(ctx, id, true)
	if errors.Is(err, provider.ErrNotFound) {
		if o.Status.Phase != v1.PhasePending {
			return 0, nil // seen in the store before, gone now: purged already
		}
		if waited := time.Since(o.DeletionTimestamp.Time); waited > purgeWait {
			r.Recorder.Eventf(o, nil, "Warning", "PurgeIncomplete", "Delete",
				"instance %q was never run by a worker in %v; its queued start is left in the store", id, purgeWait)
			return 0, nil
		}
		terr := store.Client.Terminate(ctx, id, "Orchestration "+o.Namespace+"/"+o.Name+" deleted")
		if errors.Is(terr, provider.ErrNotFound) {
			return 0, nil // no instance and no queued start: nothing to purge
		}
		if terr != nil && !errors.Is(terr, provider.ErrInstanceFinished) {
			return 0, fmt.Errorf("terminate instance %q: %w", id, terr)
		}
		return time.Second, nil
	}
	if err != nil {
		return 0, fmt.Errorf("purge instance %q: %w", id, err)
	}
	r.Recorder.Eventf(o, nil, "Normal", "Purged", "Delete", "purged instance %q: %d instances, %d history events",
		id, res.InstancesDeleted, res.EventsDeleted)
	return 0, nil
}

// purgeWait bounds how long a purge waits for a worker to record an instance
// that never ran.
const purgeWait = 2 * time.Minute

// expireAfterTTL deletes a finished Orchestration once its TTL has passed
// (its deletion policy then applies), or asks to be called back then.
func (r *OrchestrationReconciler) expireAfterTTL(ctx context.Context, o *v1.Orchestration) (reconcile.Result, error) {
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
