package controllers

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// An Orchestration can leave the API server with the finalizer still on it:
// a delete that read the object before the finalizer was added removes it
// unconditionally, though the patch adding the finalizer succeeded
// (kubernetes/kubernetes#77988). The instance its reconcile started then
// has no object and no finalizer to end it. The watch's delete event still
// carries the object's last state, finalizer included: that state is kept
// as a tombstone, and the next reconcile of the name applies its deletion
// policy as the finalizer would have.
type tombstones struct {
	mu      sync.Mutex
	objects map[types.NamespacedName]*v1.Orchestration
}

// keep records a deleted object whose finalizer never ran.
func (t *tombstones) keep(o *v1.Orchestration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.objects == nil {
		t.objects = map[types.NamespacedName]*v1.Orchestration{}
	}
	t.objects[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = o
}

// of returns the tombstone kept for name, or nil.
func (t *tombstones) of(name types.NamespacedName) *v1.Orchestration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.objects[name]
}

// drop forgets a tombstone once its deletion policy was applied, unless a
// newer one replaced it meanwhile.
func (t *tombstones) drop(o *v1.Orchestration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	name := types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
	if t.objects[name] == o {
		delete(t.objects, name)
	}
}

// finalizerBypassed keeps a tombstone for each Orchestration deleted with
// the finalizer on it and queues its name. An object the finalizer let go
// has none left in its last state.
func (r *orchestrationReconciler) finalizerBypassed() handler.TypedEventHandler[*v1.Orchestration, reconcile.Request] {
	return handler.TypedFuncs[*v1.Orchestration, reconcile.Request]{
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*v1.Orchestration], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.Object == nil || !controllerutil.ContainsFinalizer(e.Object, instanceFinalizer) {
				return
			}
			r.tombstones.keep(e.Object.DeepCopy())
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.Namespace, Name: e.Object.Name}})
		},
	}
}

// buryTombstone applies the deletion policy of the tombstone kept for the
// request, if any. done is false while the policy waits (the store is
// unreachable, a turn holds the instance): the reconcile is retried with
// res. Nothing is written to the API server: the name may already belong
// to a new object.
func (r *orchestrationReconciler) buryTombstone(ctx context.Context, req reconcile.Request) (res reconcile.Result, done bool, err error) {
	o := r.tombstones.of(req.NamespacedName)
	if o == nil {
		return reconcile.Result{}, true, nil
	}
	if !r.tombstoneOwns(ctx, o) {
		r.tombstones.drop(o)
		return reconcile.Result{}, true, nil
	}
	retry, err := r.applyDeletionPolicy(ctx, o.DeepCopy())
	if _, ok := isStoreError(err); ok {
		pool := types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.WorkerPool}
		return reconcile.Result{RequeueAfter: r.Stores.RetryAfter(pool)}, false, nil
	}
	if err != nil || retry > 0 {
		return reconcile.Result{RequeueAfter: retry}, false, err
	}
	r.tombstones.drop(o)
	return reconcile.Result{}, true, nil
}

// tombstoneOwns reports whether the tombstone's object started the instance
// its deletion policy would act on. A tombstone can be the stale last state
// of an object whose finalizer did run (a delete seen only on a relist), and
// an explicit instance ID may belong to a newer object by then: the store's
// recorded owner decides. Unknown (a store error, a start not run yet, no
// owner recorded) counts as owned, and the policy acts as the finalizer
// would have.
func (r *orchestrationReconciler) tombstoneOwns(ctx context.Context, o *v1.Orchestration) bool {
	id, _ := deletionTarget(o)
	if id == "" {
		return true
	}
	store, err := r.storeFor(ctx, o)
	if err != nil {
		return true
	}
	owner, err := store.Client.Owner(ctx, id)
	return err != nil || owner == "" || owner == ownerOf(o)
}
