// Package v1alpha1 holds the duroxide.io/v1alpha1 API: Orchestration (an
// orchestration instance, started by applying it) and WorkerPool (a
// Deployment of workers on one PostgreSQL store).
//
// +kubebuilder:object:generate=true
// +groupName=duroxide.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of these types.
	GroupVersion = schema.GroupVersion{Group: "duroxide.io", Version: "v1alpha1"}
	// SchemeBuilder registers the types with a scheme. It uses apimachinery
	// only, so that importing the API pulls in no controller libraries.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Orchestration{}, &OrchestrationList{}, &WorkerPool{}, &WorkerPoolList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
