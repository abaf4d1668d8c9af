package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// instanceFinalizer holds an Orchestration until its deletion policy has been applied.
const instanceFinalizer = "duroxide.io/instance"

// orchestrationReconciler starts each Orchestration's instance in its pool's
// store, raises its events, terminates it on request and mirrors the instance
// into the object's status.
type orchestrationReconciler struct {
	Client client.Client
	// APIReader reads past the cache, after a status write lost a race.
	APIReader client.Reader
	Stores    *poolStores
	Recorder  events.EventRecorder
	Limits    StatusLimits
	// Resync is how often a running instance is re-read without a change
	// report, the fallback for a missed one (default 30s).
	Resync time.Duration

	changes    chan event.TypedGenericEvent[*v1.Orchestration]
	tombstones tombstones
	// activityChecks paces the reads of running instances' queued activities.
	activityChecks checkSchedule
}

// StatusLimits bound what is copied from the store into an object's status,
// so that large results cannot push it toward etcd's object size limit.
type StatusLimits struct {
	Output         int // bytes of output (default 4096)
	CustomStatus   int // bytes of custom status (default 1024)
	FailureMessage int // bytes of a failure message (default 2048)
	Children       int // child instance IDs listed (default 100)
}

func (l StatusLimits) withDefaults() StatusLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Output, 4096)
	def(&l.CustomStatus, 1024)
	def(&l.FailureMessage, 2048)
	def(&l.Children, 100)
	return l
}

// +kubebuilder:rbac:groups=duroxide.io,resources=orchestrations,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=duroxide.io,resources=orchestrations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=duroxide.io,resources=orchestrations/finalizers,verbs=update
// +kubebuilder:rbac:groups=duroxide.io,resources=workerpools,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Orchestration's instance and status in line.
func (r *orchestrationReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if res, done, err := r.buryTombstone(ctx, req); !done {
		return res, err
	}
	o := &v1.Orchestration{}
	if err := r.Client.Get(ctx, req.NamespacedName, o); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !o.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, o)
	}
	if !controllerutil.ContainsFinalizer(o, instanceFinalizer) {
		patch := client.MergeFrom(o.DeepCopy())
		controllerutil.AddFinalizer(o, instanceFinalizer)
		if err := r.Client.Patch(ctx, o, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}
	return r.syncAndWrite(ctx, o)
}

// syncAndWrite syncs the instance and writes the status. A write that loses
// a race (the cache served an older object) is repeated once on a fresh read
// from the API server; the work is idempotent, so repeating it is safe.
func (r *orchestrationReconciler) syncAndWrite(ctx context.Context, o *v1.Orchestration) (reconcile.Result, error) {
	for attempt := 0; ; attempt++ {
		before := o.Status.DeepCopy()
		result, err := r.sync(ctx, o)
		summarize(o)
		raced, uerr := r.updateStatus(ctx, o, before)
		if uerr != nil {
			return reconcile.Result{}, uerr
		}
		if !raced {
			return result, err
		}
		if attempt > 0 {
			return reconcile.Result{RequeueAfter: raceRetry}, nil
		}
		fresh := &v1.Orchestration{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o), fresh); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if !fresh.DeletionTimestamp.IsZero() {
			keepStartOf(o, fresh)
			return r.finalize(ctx, fresh)
		}
		o = fresh
	}
}

// raceRetry is the pause before repeating a reconcile whose status write lost
// a race: long enough for the cache to catch up with the newer object.
const raceRetry = 200 * time.Millisecond

// sync acts on the instance and fills o.Status; the caller writes the status.
func (r *orchestrationReconciler) sync(ctx context.Context, o *v1.Orchestration) (reconcile.Result, error) {
	if finished(o.Status.Phase) && o.Status.ObservedGeneration == o.Generation && !r.rewound(ctx, o) {
		return r.expireAfterTTL(ctx, o)
	}
	removeCondition(o, condReadyBefore)
	store, err := r.storeFor(ctx, o)
	if err != nil {
		return r.storeUnavailable(o, err)
	}
	claimed, err := r.act(ctx, o, store)
	switch {
	case errors.Is(err, errIDInUse):
		return reconcile.Result{RequeueAfter: r.Resync}, nil
	case err != nil:
		setCondition(o, condStoreReachable, metav1.ConditionFalse, reasonStoreUnreachable, err.Error())
		return reconcile.Result{RequeueAfter: r.Stores.MinBackoff}, nil
	case claimed:
		// The claim goes to the API server before the start (see claimInstanceID).
		return reconcile.Result{RequeueAfter: time.Millisecond}, nil
	}
	view, err := readInstance(ctx, store, o.Status.InstanceID, r.Limits.Children)
	if err != nil {
		setCondition(o, condStoreReachable, metav1.ConditionFalse, reasonStoreUnreachable, err.Error())
		return reconcile.Result{RequeueAfter: r.Stores.MinBackoff}, nil
	}
	if err := r.reportUnconsumedEvents(ctx, o, store, view); err != nil {
		setCondition(o, condStoreReachable, metav1.ConditionFalse, reasonStoreUnreachable, err.Error())
		return reconcile.Result{RequeueAfter: r.Stores.MinBackoff}, nil
	}
	setCondition(o, condStoreReachable, metav1.ConditionTrue, "Connected", "the pool's store is reachable")
	r.mirror(o, view)
	o.Status.ObservedGeneration = o.Generation
	if o.Status.Phase == v1.PhasePending {
		return reconcile.Result{RequeueAfter: min(r.Resync, r.explainPending(ctx, o, store))}, nil
	}
	if finished(o.Status.Phase) {
		r.activityChecks.forget(o.UID)
		return r.expireAfterTTL(ctx, o)
	}
	if o.Status.Phase == v1.PhaseRunning {
		return reconcile.Result{RequeueAfter: min(r.Resync, r.explainQueuedActivities(ctx, o, store))}, nil
	}
	return reconcile.Result{RequeueAfter: r.Resync}, nil
}

// rewound reports whether a finished object's instance runs a later
// execution than the one it mirrors: it was rewound (Client.Rewind, the
// CLI, the web view), so the object follows it again. The store's change
// report wakes the object; an unreachable store or a pool being deleted
// leaves it as it is. It touches neither the pool nor its Secret.
func (r *orchestrationReconciler) rewound(ctx context.Context, o *v1.Orchestration) bool {
	if o.Status.InstanceID == "" {
		return false
	}
	pool := &v1.WorkerPool{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.WorkerPool}, pool); err != nil || !pool.DeletionTimestamp.IsZero() {
		return false
	}
	store, err := r.Stores.ForPool(ctx, pool)
	if err != nil {
		return false
	}
	st, err := store.Client.Status(ctx, o.Status.InstanceID)
	return err == nil && st.ExecutionID > o.Status.ExecutionID
}

// act claims the instance ID, starts the instance, raises new events and
// terminates on request. Each step is idempotent, so repeating it after a
// failed status write is harmless. claimed asks for the status to be written
// before going on.
func (r *orchestrationReconciler) act(ctx context.Context, o *v1.Orchestration, store *poolStore) (claimed bool, err error) {
	if o.Status.InstanceID == "" {
		if claimed, err := r.claimInstanceID(ctx, o, store); claimed || err != nil {
			return claimed, err
		}
	} else if err := r.keepClaim(ctx, o, store); err != nil {
		return false, err
	}
	if o.Status.InputDigest == "" {
		if err := r.start(ctx, o, store); err != nil {
			return false, err
		}
	}
	checkInput(o)
	if err := r.raiseEvents(ctx, o, store); err != nil {
		return false, err
	}
	return false, r.terminate(ctx, o, store)
}

// storeFor resolves the Orchestration's pool and returns its store. The pool
// and its Secret are held first: the deletion policy of an instance started
// with this store needs both.
func (r *orchestrationReconciler) storeFor(ctx context.Context, o *v1.Orchestration) (*poolStore, error) {
	pool := &v1.WorkerPool{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.WorkerPool}, pool); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &storeError{Reason: reasonPoolNotFound,
				Err: fmt.Errorf("WorkerPool %q not found in namespace %s", o.Spec.WorkerPool, o.Namespace)}
		}
		return nil, fmt.Errorf("get WorkerPool %q: %w", o.Spec.WorkerPool, err)
	}
	if err := ensurePoolFinalizer(ctx, r.Client, pool); err != nil {
		return nil, err
	}
	if err := holdSecret(ctx, r.Client, pool); err != nil {
		return nil, err
	}
	return r.Stores.ForPool(ctx, pool)
}

// storeUnavailable records why the store cannot be used. A missing pool waits
// for the pool to appear (the pool watch wakes it); the other causes retry
// on the store's backoff.
func (r *orchestrationReconciler) storeUnavailable(o *v1.Orchestration, err error) (reconcile.Result, error) {
	se, ok := isStoreError(err)
	if !ok {
		return reconcile.Result{}, err
	}
	if !meta.IsStatusConditionPresentAndEqual(o.Status.Conditions, condStoreReachable, metav1.ConditionFalse) ||
		meta.FindStatusCondition(o.Status.Conditions, condStoreReachable).Reason != se.Reason {
		r.Recorder.Eventf(o, nil, "Warning", se.Reason, "Reconcile", "%s", se.Error())
	}
	setCondition(o, condStoreReachable, metav1.ConditionFalse, se.Reason, se.Error())
	if o.Status.Phase == "" {
		o.Status.Phase = v1.PhasePending
	}
	if se.Reason == reasonPoolNotFound {
		return reconcile.Result{RequeueAfter: 5 * time.Minute}, nil
	}
	pool := types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.WorkerPool}
	return reconcile.Result{RequeueAfter: r.Stores.RetryAfter(pool)}, nil
}

// updateStatus writes the status when it changed. raced reports a conflict:
// the object changed since it was read, and the reconcile must be repeated
// (its work is idempotent) on the newer object.
func (r *orchestrationReconciler) updateStatus(ctx context.Context, o *v1.Orchestration, before *v1.OrchestrationStatus) (raced bool, err error) {
	if statusEqual(before, &o.Status) {
		return false, nil
	}
	// The times are read before the write: the object the API server
	// returns has them in whole seconds.
	written := o.DeepCopy()
	if err := r.Client.Status().Update(ctx, o); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("status write raced; repeating", "error", err.Error())
			return true, nil
		}
		return false, fmt.Errorf("update status: %w", err)
	}
	mirrorMetrics.observeStatusWrite(written, before.Phase, time.Now())
	r.recordPhaseChange(o, before.Phase)
	return false, nil
}

// instanceChanged maps a store's status change to the Orchestrations that
// mirror the instance.
func (r *orchestrationReconciler) instanceChanged(pool types.NamespacedName, instance string) {
	var list v1.OrchestrationList
	err := r.Client.List(context.Background(), &list, client.InNamespace(pool.Namespace),
		client.MatchingFields{indexInstance: instanceKey(pool.Name, instance)})
	if err != nil {
		return
	}
	for i := range list.Items {
		r.changes <- event.TypedGenericEvent[*v1.Orchestration]{Object: &list.Items[i]}
	}
}

func finished(p v1.OrchestrationPhase) bool {
	return p == v1.PhaseCompleted || p == v1.PhaseFailed || p == v1.PhaseTerminated
}

// ReasonPoolNotFound: the Orchestration names a WorkerPool that does not exist.
const reasonPoolNotFound = "PoolNotFound"
