package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/worker"
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

// A pool's activityTags reach its workers as DUROXIDE_ACTIVITY_TAGS, which
// the worker reads into the filter its fetches use; no tags, no variable.
func TestActivityTagsReachTheWorkers(t *testing.T) {
	cases := []struct {
		name     string
		tags     []string
		override string // the pod template's own DUROXIDE_ACTIVITY_TAGS, if any
		env      string // "" = unset
		takes    []string
		refuses  []string
	}{
		{name: "none: untagged only", takes: []string{""}, refuses: []string{"gpu"}},
		{name: "one tag", tags: []string{"gpu"}, env: "gpu", takes: []string{"gpu"}, refuses: []string{"", "ml"}},
		{name: "tags and untagged", tags: []string{"-", "gpu", "ml"}, env: "-,gpu,ml", takes: []string{"", "gpu", "ml"}, refuses: []string{"tpu"}},
		{name: "every activity", tags: []string{"*"}, env: "*", takes: []string{"", "gpu", "tpu"}},
		{name: "the pod template's entry wins", tags: []string{"gpu"}, override: "tpu", env: "tpu", takes: []string{"tpu"}, refuses: []string{"gpu", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
				Spec: v1.WorkerPoolSpec{Image: "w:1", ActivityTags: c.tags,
					Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}}}}
			if c.override != "" {
				pool.Spec.PodTemplate = &v1.WorkerPodTemplate{Env: []corev1.EnvVar{{Name: worker.EnvActivityTags, Value: c.override}}}
			}
			env := containerEnv(t, pool)
			got, set := env[worker.EnvActivityTags]
			if set != (c.env != "") || got != c.env {
				t.Fatalf("%s = %q (set %v), want %q", worker.EnvActivityTags, got, set, c.env)
			}
			env[worker.EnvPostgresURL] = "postgres://db/x" // a Secret reference in the pod
			cfg, err := worker.ConfigFromEnv(func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("the worker refuses the pool's environment: %v", err)
			}
			for _, tag := range c.takes {
				if !cfg.ActivityTags.Matches(tag) {
					t.Errorf("worker does not take tag %q (filter %q)", tag, cfg.ActivityTags)
				}
			}
			for _, tag := range c.refuses {
				if cfg.ActivityTags.Matches(tag) {
					t.Errorf("worker takes tag %q (filter %q)", tag, cfg.ActivityTags)
				}
			}
		})
	}
}

// containerEnv is the worker container's environment with literal values,
// as the Deployment the operator applies sets it.
func containerEnv(t *testing.T, pool *v1.WorkerPool) map[string]string {
	t.Helper()
	dep := desiredDeployment(pool, PodDefaults{})
	containers := dep.Spec.Template.Spec.Containers
	if len(containers) != 1 {
		t.Fatalf("%d containers", len(containers))
	}
	env := map[string]string{}
	for _, e := range containers[0].Env {
		if e.Value != nil {
			env[*e.Name] = *e.Value
		}
	}
	return env
}
