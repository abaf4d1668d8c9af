package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// annotationInputDigest carries, in the cache only, the digest of the
// spec.input the transform removed; it is never written to the API server
// (status writes ignore metadata, patches carry only what they change).
const annotationInputDigest = "duroxide.io/cached-input-digest"

// lastApplied is kubectl's client-side apply annotation: a second copy of
// the whole object, input included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// CacheOptions keep the operator's memory flat in the number and size of
// Orchestrations: the cache holds each object without its input (read from
// the API server once, to start the instance), kubectl's last-applied copy
// or managed fields; Secrets are cached as metadata only (their data is
// read when a store is opened).
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&v1.Orchestration{}:  {Transform: slimOrchestration},
			&v1.WorkerPool{}:     {Transform: slimMetadata},
			secretMetadataType(): {Transform: slimMetadata},
		},
	}
}

// keepInputBytes: a smaller input stays in the cache, sparing its start a
// read from the API server; a larger one is replaced by its digest.
const keepInputBytes = 1024

// slimOrchestration replaces a large spec.input by its digest and drops what
// the reconciler never reads.
func slimOrchestration(obj any) (any, error) {
	o, ok := obj.(*v1.Orchestration)
	if !ok {
		return obj, nil
	}
	o.ManagedFields = nil
	ann := o.Annotations
	delete(ann, lastApplied)
	if o.Spec.Input != nil && len(o.Spec.Input.Raw) > keepInputBytes {
		if ann == nil {
			ann = map[string]string{}
		}
		ann[annotationInputDigest] = digestOf(o.Spec.Input)
		o.Spec.Input = nil
	}
	o.Annotations = ann
	return o, nil
}

// slimMetadata drops managed fields and the last-applied copy (which, for a
// Secret applied with kubectl, holds its data).
func slimMetadata(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	m.SetManagedFields(nil)
	if ann := m.GetAnnotations(); ann != nil {
		delete(ann, lastApplied)
		m.SetAnnotations(ann)
	}
	return obj, nil
}

func secretMetadataType() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// inputDigestOf is the digest of the object's current spec.input, from the
// cache's annotation or, on an object read past the cache, from the input.
func inputDigestOf(o *v1.Orchestration) string {
	if d, ok := o.Annotations[annotationInputDigest]; ok && o.Spec.Input == nil {
		return d
	}
	return digestOf(o.Spec.Input)
}

// readInput returns the object's spec.input, which the cache does not keep.
func (r *orchestrationReconciler) readInput(ctx context.Context, o *v1.Orchestration) (*apiextensionsv1.JSON, error) {
	if _, stripped := o.Annotations[annotationInputDigest]; !stripped {
		return o.Spec.Input, nil
	}
	fresh := &v1.Orchestration{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o), fresh); err != nil {
		return nil, fmt.Errorf("read spec.input: %w", err)
	}
	if fresh.UID != o.UID {
		return nil, fmt.Errorf("read spec.input: the object was replaced")
	}
	return fresh.Spec.Input, nil
}
