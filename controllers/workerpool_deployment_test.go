package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// The operator's pod defaults fill what a pool leaves unset, never override it.
func TestPodDefaultsFillOnlyUnsetFields(t *testing.T) {
	d := PodDefaults{HostNetwork: true, ImagePullPolicy: corev1.PullNever}
	got := d.apply(nil)
	if !got.HostNetwork || got.ImagePullPolicy != corev1.PullNever {
		t.Errorf("no template: %+v", got)
	}
	own := &v1.WorkerPodTemplate{ImagePullPolicy: corev1.PullAlways, Labels: map[string]string{"a": "b"}}
	got = d.apply(own)
	if got.ImagePullPolicy != corev1.PullAlways || !got.HostNetwork || got.Labels["a"] != "b" {
		t.Errorf("pool template: %+v", got)
	}
	if own.HostNetwork {
		t.Error("apply changed the pool's own template")
	}
	if got := (PodDefaults{}).apply(own); got.HostNetwork || got.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("no defaults: %+v", got)
	}
}
