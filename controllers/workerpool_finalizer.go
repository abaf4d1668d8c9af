package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// poolFinalizer holds a WorkerPool until no Orchestration uses it: their
// deletion policies need the pool's store. Deleting a namespace deletes
// everything in it at once; without this, the pool could go first and the
// instances be left running.
const poolFinalizer = "duroxide.io/orchestrations"

// poolWaitRecheck is how often a deleting pool looks for Orchestrations that
// still use it (their deletions also wake it).
const poolWaitRecheck = 5 * time.Second

// finalize lets a deleting pool go once its Orchestrations are gone, then
// closes its store client.
func (r *workerPoolReconciler) finalize(ctx context.Context, pool *v1.WorkerPool) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(pool, poolFinalizer) {
		r.Stores.Close(types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name})
		poolStoreGauges.forget(types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name})
		return reconcile.Result{}, nil
	}
	var list v1.OrchestrationList
	if err := r.Client.List(ctx, &list, client.InNamespace(pool.Namespace), client.MatchingFields{indexPool: pool.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list Orchestrations of pool: %w", err)
	}
	if n := len(list.Items); n > 0 {
		msg := fmt.Sprintf("deletion waits for %d Orchestrations using this pool (%s) to be deleted and their deletion policies applied; "+
			"Secret %q, which they need to reach the store, stays until this pool is gone", n, list.Items[0].Name, pool.Spec.Postgres.SecretRef.Name)
		if c := meta.FindStatusCondition(pool.Status.Conditions, condReady); c == nil || c.Reason != "Deleting" {
			r.Recorder.Eventf(pool, nil, "Normal", "Deleting", "Delete", "%s", msg)
			meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: condReady, Status: metav1.ConditionFalse,
				Reason: "Deleting", Message: msg, ObservedGeneration: pool.Generation})
			_ = r.Client.Status().Update(ctx, pool) // informative only; a lost write changes nothing
		}
		return reconcile.Result{RequeueAfter: poolWaitRecheck}, nil
	}
	patch := client.MergeFrom(pool.DeepCopy())
	controllerutil.RemoveFinalizer(pool, poolFinalizer)
	if err := r.Client.Patch(ctx, pool, patch); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("remove finalizer: %w", err)
	}
	r.Stores.Close(types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name})
	poolStoreGauges.forget(types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name})
	return reconcile.Result{}, nil
}

// ensurePoolFinalizer adds the pool's finalizer if its reconciler has not yet:
// an instance is never started on a pool that could be deleted without
// waiting for its Orchestrations (a pool deleted right after it was created).
func ensurePoolFinalizer(ctx context.Context, c client.Client, pool *v1.WorkerPool) error {
	if controllerutil.ContainsFinalizer(pool, poolFinalizer) || !pool.DeletionTimestamp.IsZero() {
		return nil
	}
	patch := client.MergeFrom(pool.DeepCopy())
	controllerutil.AddFinalizer(pool, poolFinalizer)
	if err := c.Patch(ctx, pool, patch); err != nil {
		return fmt.Errorf("add finalizer to WorkerPool %q: %w", pool.Name, err)
	}
	return nil
}

// poolOfOrchestration maps an Orchestration to its pool.
func poolOfOrchestration(_ context.Context, o client.Object) []reconcile.Request {
	orch, ok := o.(*v1.Orchestration)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: orch.Namespace, Name: orch.Spec.WorkerPool}}}
}

// poolsOfSecret maps a Secret to the pools whose store it opens. A Secret
// created after its pool, or rotated, takes effect now rather than on the
// next backoff or status refresh.
func (r *workerPoolReconciler) poolsOfSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	return poolsUsingSecret(ctx, r.Client, r.Stores, secret)
}

func poolsUsingSecret(ctx context.Context, c client.Client, stores *poolStores, secret client.Object) []reconcile.Request {
	var pools v1.WorkerPoolList
	if err := c.List(ctx, &pools, client.InNamespace(secret.GetNamespace()), client.MatchingFields{indexPoolSecret: secret.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(pools.Items))
	for _, p := range pools.Items {
		key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		stores.ForgetFailure(key)
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}
