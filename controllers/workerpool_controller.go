package controllers

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
)

// workerPoolReconciler keeps each WorkerPool's Deployment as the pool says
// and reports the Deployment and the pool's store in the pool's status.
type workerPoolReconciler struct {
	Client   client.Client
	Stores   *poolStores
	Recorder events.EventRecorder
	// StatusInterval is how often queue depths and instance counts are
	// refreshed (default 30s).
	StatusInterval time.Duration
	PodDefaults    PodDefaults
}

// Condition types of a WorkerPool.
// (and condStoreReachable, shared with Orchestrations). Ready sums them up.
const (
	condAvailable = "Available"
	condReady     = "Ready"
)

// Reasons of a pool's Ready=False that are not the store's.
const (
	// ReasonScaledToZero: the pool asks for no workers, so nothing runs its instances.
	reasonScaledToZero = "ScaledToZero"
	// ReasonNoAvailableWorkers: the pool asks for workers, but none is available yet.
	reasonNoAvailableWorkers = "NoAvailableWorkers"
	// ReasonStoreNotChecked: the store has not been checked yet.
	reasonStoreNotChecked = "StoreNotChecked"
)

// +kubebuilder:rbac:groups=duroxide.io,resources=workerpools,verbs=get;list;watch
// +kubebuilder:rbac:groups=duroxide.io,resources=workerpools/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=duroxide.io,resources=workerpools/finalizers,verbs=update
// +kubebuilder:rbac:groups=duroxide.io,resources=workerpools,verbs=update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// Reconcile applies the pool's Deployment and refreshes its status.
func (r *workerPoolReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &v1.WorkerPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if apierrors.IsNotFound(err) {
			// The Deployment goes with its owner; the store client goes here.
			r.Stores.Close(req.NamespacedName)
			poolStoreGauges.forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !pool.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, pool)
	}
	if err := ensurePoolFinalizer(ctx, r.Client, pool); err != nil {
		return reconcile.Result{}, err
	}
	if err := holdSecret(ctx, r.Client, pool); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.Client.Apply(ctx, desiredDeployment(pool, r.PodDefaults), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return reconcile.Result{}, fmt.Errorf("apply deployment: %w", err)
	}
	dep := &appsv1.Deployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, dep); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("get deployment: %w", err)
	}
	before := pool.Status.DeepCopy()
	setDeploymentStatus(pool, dep)
	r.setStoreStatus(ctx, pool)
	meta.SetStatusCondition(&pool.Status.Conditions, readyCondition(pool, dep.Status.AvailableReplicas))
	pool.Status.ObservedGeneration = pool.Generation
	if !equality.Semantic.DeepEqual(before, &pool.Status) {
		if err := r.Client.Status().Update(ctx, pool); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{RequeueAfter: raceRetry}, nil
			}
			return reconcile.Result{}, fmt.Errorf("update status: %w", err)
		}
	}
	return reconcile.Result{RequeueAfter: r.StatusInterval}, nil
}

// readyCondition says whether the pool can run work: at least one worker
// available and the store reachable. `kubectl wait --for=condition=Ready
// workerpool/x` waits for it, so a pool scaled to 0 is not Ready, though its
// Deployment is Available (it has all of its 0 replicas).
func readyCondition(pool *v1.WorkerPool, available int32) metav1.Condition {
	want := ptr.Deref(pool.Spec.Replicas, 1)
	c := metav1.Condition{Type: condReady, Status: metav1.ConditionFalse, ObservedGeneration: pool.Generation}
	store := meta.FindStatusCondition(pool.Status.Conditions, condStoreReachable)
	switch {
	case want == 0:
		c.Reason = reasonScaledToZero
		c.Message = fmt.Sprintf("scaled to 0 replicas: no worker runs this pool's instances (kubectl scale workerpool %s --replicas=N)", pool.Name)
	case available == 0:
		c.Reason, c.Message = reasonNoAvailableWorkers, fmt.Sprintf("0 of %d workers available", want)
	case store == nil:
		c.Reason, c.Message = reasonStoreNotChecked, "the store has not been checked yet"
	case store.Status != metav1.ConditionTrue:
		c.Reason, c.Message = store.Reason, store.Message
	default:
		c.Status, c.Reason = metav1.ConditionTrue, "Ready"
		c.Message = fmt.Sprintf("%d of %d workers available and the store is reachable", available, want)
	}
	return c
}

// setDeploymentStatus copies replica counts and availability from the Deployment.
func setDeploymentStatus(pool *v1.WorkerPool, dep *appsv1.Deployment) {
	pool.Status.Replicas = dep.Status.Replicas
	pool.Status.ReadyReplicas = dep.Status.ReadyReplicas
	pool.Status.Selector = selectorString(pool)
	want := dep.Spec.Replicas
	available := metav1.Condition{Type: condAvailable, Status: metav1.ConditionFalse, Reason: "Progressing",
		Message: fmt.Sprintf("%d of %d workers ready", dep.Status.ReadyReplicas, ptr.Deref(want, 1))}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == "True" {
			available.Status, available.Reason = metav1.ConditionTrue, "MinimumReplicasAvailable"
		}
	}
	available.ObservedGeneration = pool.Generation
	meta.SetStatusCondition(&pool.Status.Conditions, available)
}

// setStoreStatus reports whether the store is reachable, its queue depths
// and its instance counts. The store's Secret is re-checked so that a
// rotated connection string takes effect.
func (r *workerPoolReconciler) setStoreStatus(ctx context.Context, pool *v1.WorkerPool) {
	cond := metav1.Condition{Type: condStoreReachable, ObservedGeneration: pool.Generation}
	r.Stores.Refresh(ctx, pool)
	store, err := r.Stores.ForPool(ctx, pool)
	if err == nil {
		err = readPoolCounts(ctx, store, pool)
	}
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonStoreUnreachable, err.Error()
		if se, ok := isStoreError(err); ok {
			cond.Reason = se.Reason
		}
	} else {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Connected", "the store is reachable"
	}
	if old := meta.FindStatusCondition(pool.Status.Conditions, condStoreReachable); old == nil || old.Status != cond.Status {
		kind := "Normal"
		if cond.Status == metav1.ConditionFalse {
			kind = "Warning"
		}
		r.Recorder.Eventf(pool, nil, kind, cond.Reason, "CheckStore", "%s", cond.Message)
	}
	meta.SetStatusCondition(&pool.Status.Conditions, cond)
}

// readPoolCounts reads the store's queue depths and instance counts into the
// pool's status, and them and its backlog into the operator's metrics.
func readPoolCounts(ctx context.Context, store *poolStore, pool *v1.WorkerPool) error {
	key := types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name}
	reading, err := readStore(ctx, store.provider)
	reading.store = store.config.label()
	poolStoreGauges.record(key, reading)
	if err != nil {
		return err
	}
	q, m := reading.depths, reading.metrics
	pool.Status.QueueDepths = &v1.QueueDepths{Orchestrator: q.Orchestrator, Worker: q.Worker, Delayed: q.Delayed}
	pool.Status.Instances = &v1.InstanceCounts{Running: m.Running, Completed: m.Completed, Failed: m.Failed, Terminated: m.Terminated}
	return nil
}

// readStore reads what the pool's status and metrics report of its store.
func readStore(ctx context.Context, p provider.Provider) (poolReading, error) {
	r := poolReading{at: time.Now()}
	var err error
	if r.depths, err = p.GetQueueDepths(ctx); err != nil {
		r.err = fmt.Errorf("read queue depths: %w", err)
	} else if r.metrics, err = p.GetSystemMetrics(ctx); err != nil {
		r.err = fmt.Errorf("read instance counts: %w", err)
	} else if r.backlog, err = p.GetBacklog(ctx); err != nil {
		r.err = fmt.Errorf("read backlog: %w", err)
	}
	return r, r.err
}

// SetupWithManager registers the reconciler; it owns the pools' Deployments.
func (r *workerPoolReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.StatusInterval <= 0 {
		r.StatusInterval = 30 * time.Second
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("workerpool").
		// Generation changes and deletions only: the reconciler's own status
		// writes must not wake it (queue depths change constantly);
		// StatusInterval refreshes them.
		For(&v1.WorkerPool{}, builder.WithPredicates(specOrDeletionChanged())).
		Owns(&appsv1.Deployment{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.poolsOfSecret)).
		// A deleted Orchestration may be the last one a deleting pool waits for.
		Watches(&v1.Orchestration{}, handler.EnqueueRequestsFromMapFunc(poolOfOrchestration),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(event.CreateEvent) bool { return false },
				UpdateFunc: func(event.UpdateEvent) bool { return false },
			})).
		Complete(r)
}
