package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// secretFinalizer holds a Secret while a WorkerPool uses it: the deletion
// policies of the pool's Orchestrations open the pool's store with it.
// Deleting a namespace deletes the Secret with everything else; without
// this, an operator that (re)opens the store after the Secret went cannot
// terminate the instances, and the namespace stays Terminating. A pool is
// itself held until its Orchestrations are gone (poolFinalizer), so the
// Secret outlives them.
const secretFinalizer = "duroxide.io/workerpools"

// holdSecret adds secretFinalizer to the pool's Secret. A Secret not there
// yet is held when it appears (its watch wakes the pool); one being deleted
// can take no new finalizer. The Secret's metadata comes from the cache,
// its data is never read here.
func holdSecret(ctx context.Context, c client.Client, pool *v1.WorkerPool) error {
	name := pool.Spec.Postgres.SecretRef.Name
	secret := secretMetadataType()
	if err := c.Get(ctx, types.NamespacedName{Namespace: pool.Namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get Secret %q of WorkerPool %q: %w", name, pool.Name, err)
	}
	if controllerutil.ContainsFinalizer(secret, secretFinalizer) || !secret.DeletionTimestamp.IsZero() {
		return nil
	}
	err := c.Patch(ctx, secret, addSecretFinalizer)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		// Gone, or being deleted though the cache did not show it yet: the
		// API server refuses a new finalizer then, and there is nothing to hold.
		return nil
	}
	if err != nil {
		return fmt.Errorf("add finalizer to Secret %q of WorkerPool %q: %w", name, pool.Name, err)
	}
	return nil
}

// The finalizer is added and removed by strategic merge patches, which
// change only that entry of metadata.finalizers (a merged list): neither the
// finalizers others add meanwhile are lost, nor does a stale cache make the
// patch conflict, as a merge patch of the whole list would.
var (
	addSecretFinalizer = client.RawPatch(types.StrategicMergePatchType,
		[]byte(`{"metadata":{"finalizers":["`+secretFinalizer+`"]}}`))
	removeSecretFinalizer = client.RawPatch(types.StrategicMergePatchType,
		[]byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["`+secretFinalizer+`"]}}`))
)

// poolSecretReconciler lets a held Secret go once no WorkerPool uses it: its
// last pool is gone (after that pool's Orchestrations) or names another
// Secret. Several pools may share one Secret.
type poolSecretReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=duroxide.io,resources=workerpools,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile removes secretFinalizer from a Secret no pool uses.
func (r *poolSecretReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	secret := secretMetadataType()
	if err := r.Client.Get(ctx, req.NamespacedName, secret); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(secret, secretFinalizer) {
		return reconcile.Result{}, nil
	}
	users, err := r.poolsUsing(ctx, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(users) > 0 {
		if !secret.DeletionTimestamp.IsZero() {
			r.Recorder.Eventf(secret, nil, corev1.EventTypeNormal, "Held", "Delete",
				"deletion waits until no WorkerPool uses this Secret (%s): their Orchestrations' deletion policies need the store", strings.Join(users, ", "))
		}
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.release(ctx, secret)
}

// poolsUsing names the pools of the Secret's namespace that use it.
func (r *poolSecretReconciler) poolsUsing(ctx context.Context, secret types.NamespacedName) ([]string, error) {
	var pools v1.WorkerPoolList
	if err := r.Client.List(ctx, &pools, client.InNamespace(secret.Namespace), client.MatchingFields{indexPoolSecret: secret.Name}); err != nil {
		return nil, fmt.Errorf("list WorkerPools using Secret %q: %w", secret.Name, err)
	}
	names := make([]string, 0, len(pools.Items))
	for _, p := range pools.Items {
		names = append(names, p.Name)
	}
	return names, nil
}

// release removes secretFinalizer; a Secret being deleted then goes.
func (r *poolSecretReconciler) release(ctx context.Context, secret *metav1.PartialObjectMetadata) error {
	if err := r.Client.Patch(ctx, secret, removeSecretFinalizer); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer from Secret %q: %w", secret.Name, err)
	}
	return nil
}

// SetupWithManager registers the reconciler: it watches the metadata of the
// Secrets it holds, and the pools, whose creation, deletion or change of
// Secret may release one.
func (r *poolSecretReconciler) SetupWithManager(mgr ctrl.Manager) error {
	held := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return controllerutil.ContainsFinalizer(o, secretFinalizer)
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("workerpool-secret").
		For(&corev1.Secret{}, builder.OnlyMetadata, builder.WithPredicates(held)).
		// Pool creations, deletions and spec changes: status writes change nothing here.
		Watches(&v1.WorkerPool{}, handler.EnqueueRequestsFromMapFunc(secretOfPool),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// secretOfPool maps a pool to the Secret it uses. On a change of Secret both
// the old and the new one are asked for.
func secretOfPool(_ context.Context, o client.Object) []reconcile.Request {
	pool, ok := o.(*v1.WorkerPool)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pool.Namespace, Name: pool.Spec.Postgres.SecretRef.Name}}}
}
