package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// Field indexes on Orchestrations.
const (
	// indexInstance maps "<pool>\x00<instance ID>" to the Orchestration
	// mirroring that instance, for routing the store's change reports.
	indexInstance = "duroxide.io/instance"
	// indexPool maps a pool name to the Orchestrations that use it.
	indexPool = "duroxide.io/pool"
	// indexPoolSecret maps a Secret name to the WorkerPools that use it.
	indexPoolSecret = "duroxide.io/secret"
)

func instanceKey(pool, instance string) string { return pool + "\x00" + instance }

// SetupWithManager registers the reconciler, its indexes and its sources:
// Orchestration spec changes and deletions, pools appearing or changing
// their store, and the stores' status change reports.
func (r *orchestrationReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if r.Resync <= 0 {
		r.Resync = 30 * time.Second
	}
	r.Limits = r.Limits.withDefaults()
	r.changes = make(chan event.TypedGenericEvent[*v1.Orchestration], 1024)
	r.Stores.OnChange = r.instanceChanged
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1.Orchestration{}, indexInstance, func(obj client.Object) []string {
		o := obj.(*v1.Orchestration)
		return []string{instanceKey(o.Spec.WorkerPool, instanceID(o))}
	}); err != nil {
		return fmt.Errorf("index orchestrations by instance: %w", err)
	}
	if err := idx.IndexField(ctx, &v1.Orchestration{}, indexPool, func(obj client.Object) []string {
		return []string{obj.(*v1.Orchestration).Spec.WorkerPool}
	}); err != nil {
		return fmt.Errorf("index orchestrations by pool: %w", err)
	}
	if err := idx.IndexField(ctx, &v1.WorkerPool{}, indexPoolSecret, func(obj client.Object) []string {
		return []string{obj.(*v1.WorkerPool).Spec.Postgres.SecretRef.Name}
	}); err != nil {
		return fmt.Errorf("index pools by secret: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("orchestration").
		For(&v1.Orchestration{}, builder.WithPredicates(specOrDeletionChanged())).
		WatchesRawSource(source.Kind(mgr.GetCache(), &v1.Orchestration{}, r.finalizerBypassed())).
		Watches(&v1.WorkerPool{}, handler.EnqueueRequestsFromMapFunc(r.orchestrationsOfPool),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.orchestrationsOfSecret)).
		WatchesRawSource(source.Channel(r.changes, storeChangeHandler())).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// orchestrationsOfPool wakes the Orchestrations of a pool that appeared or
// changed its store settings.
func (r *orchestrationReconciler) orchestrationsOfPool(ctx context.Context, pool client.Object) []reconcile.Request {
	var list v1.OrchestrationList
	if err := r.Client.List(ctx, &list, client.InNamespace(pool.GetNamespace()), client.MatchingFields{indexPool: pool.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, o := range list.Items {
		if finished(o.Status.Phase) && o.DeletionTimestamp.IsZero() {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
	}
	return reqs
}

// orchestrationsOfSecret wakes the Orchestrations of the pools whose store a
// Secret opens, when it appears or changes.
func (r *orchestrationReconciler) orchestrationsOfSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, pool := range poolsUsingSecret(ctx, r.Client, r.Stores, secret) {
		p := &v1.WorkerPool{}
		p.Namespace, p.Name = pool.Namespace, pool.Name
		reqs = append(reqs, r.orchestrationsOfPool(ctx, p)...)
	}
	return reqs
}

// specOrDeletionChanged passes creations, spec changes and deletions, but not
// the operator's own status writes.
func specOrDeletionChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				!e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
	}
}

// storeChangePriority ranks reconciles caused by a store's change reports
// above others (creations, resyncs): under a burst of new Orchestrations, the
// status of finished instances would otherwise wait behind every start.
const storeChangePriority = 1

// storeChangeDelay lets the changes of a short turn sequence (Running, then
// Completed a few milliseconds later) coalesce into one reconcile and one
// status write instead of two.
const storeChangeDelay = 200 * time.Millisecond

// storeChangeHandler enqueues the Orchestration a store change is about,
// with storeChangePriority when the queue has priorities.
func storeChangeHandler() handler.TypedEventHandler[*v1.Orchestration, reconcile.Request] {
	return handler.TypedFuncs[*v1.Orchestration, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*v1.Orchestration], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.Namespace, Name: e.Object.Name}}
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(storeChangePriority), After: storeChangeDelay}, req)
				return
			}
			q.AddAfter(req, storeChangeDelay)
		},
	}
}
