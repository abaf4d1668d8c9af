package controllers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/worker"
)

// Ports the worker serves on.
const (
	healthPort  = 8081
	metricsPort = 9090
)

// labelPool marks the pods (and the Deployment) of a pool.
const labelPool = "duroxide.io/pool"

// fieldOwner is the operator's server-side apply identity.
const fieldOwner = "duroxide-operator"

func poolLabels(pool *v1.WorkerPool) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "duroxide-worker",
		"app.kubernetes.io/instance":   pool.Name,
		"app.kubernetes.io/managed-by": fieldOwner,
		labelPool:                      pool.Name,
	}
}

// poolSelector selects the pool's pods; it never changes, as a Deployment's
// selector cannot.
func poolSelector(pool *v1.WorkerPool) map[string]string {
	return map[string]string{labelPool: pool.Name}
}

// desiredDeployment is the Deployment the pool owns, as a server-side apply
// configuration: only the fields the operator sets are sent and owned, so
// the API server's defaults cause no endless updates.
func desiredDeployment(pool *v1.WorkerPool, defaults PodDefaults) *appsv1ac.DeploymentApplyConfiguration {
	tmpl := defaults.apply(pool.Spec.PodTemplate)
	owner := metav1ac.OwnerReference().
		WithAPIVersion(v1.GroupVersion.String()).WithKind("WorkerPool").
		WithName(pool.Name).WithUID(pool.UID).
		WithController(true).WithBlockOwnerDeletion(true)
	pod := corev1ac.PodTemplateSpec().
		WithLabels(tmpl.Labels).WithLabels(poolLabels(pool)).
		WithSpec(podSpec(pool, tmpl))
	if len(tmpl.Annotations) > 0 {
		pod.WithAnnotations(tmpl.Annotations)
	}
	return appsv1ac.Deployment(pool.Name, pool.Namespace).
		WithLabels(poolLabels(pool)).
		WithOwnerReferences(owner).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(ptr.Deref(pool.Spec.Replicas, 1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(poolSelector(pool))).
			WithTemplate(pod))
}

func podSpec(pool *v1.WorkerPool, tmpl *v1.WorkerPodTemplate) *corev1ac.PodSpecApplyConfiguration {
	spec := corev1ac.PodSpec().
		WithTerminationGracePeriodSeconds(ptr.Deref(tmpl.TerminationGracePeriodSeconds, 30)).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(65532).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(workerContainer(pool, tmpl))
	if tmpl.HostNetwork {
		spec.WithHostNetwork(true).WithDNSPolicy(corev1.DNSClusterFirstWithHostNet)
	}
	if len(tmpl.NodeSelector) > 0 {
		spec.WithNodeSelector(tmpl.NodeSelector)
	}
	for i := range tmpl.Tolerations {
		spec.WithTolerations(applyConfig[corev1ac.TolerationApplyConfiguration](tmpl.Tolerations[i]))
	}
	if tmpl.ServiceAccountName != "" {
		spec.WithServiceAccountName(tmpl.ServiceAccountName)
	}
	if tmpl.PriorityClassName != "" {
		spec.WithPriorityClassName(tmpl.PriorityClassName)
	}
	return spec
}

func workerContainer(pool *v1.WorkerPool, tmpl *v1.WorkerPodTemplate) *corev1ac.ContainerApplyConfiguration {
	c := corev1ac.Container().
		WithName("worker").
		WithImage(pool.Spec.Image).
		WithEnv(workerEnv(pool, tmpl)...).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")))
	if tmpl.ImagePullPolicy != "" {
		c.WithImagePullPolicy(tmpl.ImagePullPolicy)
	}
	if tmpl.Resources != nil {
		c.WithResources(applyConfig[corev1ac.ResourceRequirementsApplyConfiguration](*tmpl.Resources))
	}
	if tmpl.HostNetwork {
		// Replicas share the node's ports: no fixed ports, so no HTTP probes.
		return c
	}
	probe := func(path string) *corev1ac.ProbeApplyConfiguration {
		return corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromString("health"))).
			WithPeriodSeconds(10).WithFailureThreshold(3)
	}
	return c.
		WithPorts(
			corev1ac.ContainerPort().WithName("health").WithContainerPort(healthPort),
			corev1ac.ContainerPort().WithName("metrics").WithContainerPort(metricsPort)).
		WithLivenessProbe(probe("/healthz")).
		WithReadinessProbe(probe("/readyz"))
}

// workerEnv passes the pool's settings to the worker (package worker reads
// them). The connection string is a reference to the Secret, never its value.
// Entries of the pod template replace same-named ones.
func workerEnv(pool *v1.WorkerPool, tmpl *v1.WorkerPodTemplate) []*corev1ac.EnvVarApplyConfiguration {
	cfg := configOf(pool)
	healthAddr, metricsAddr := ":"+strconv.Itoa(healthPort), ":"+strconv.Itoa(metricsPort)
	if tmpl.HostNetwork {
		healthAddr, metricsAddr = "127.0.0.1:0", "0"
	}
	env := []*corev1ac.EnvVarApplyConfiguration{
		corev1ac.EnvVar().WithName(worker.EnvPool).WithValue(pool.Name),
		corev1ac.EnvVar().WithName(worker.EnvPostgresURL).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(cfg.secret).WithKey(cfg.key))),
		corev1ac.EnvVar().WithName(worker.EnvPostgresSchema).WithValue(cfg.schema),
		corev1ac.EnvVar().WithName(worker.EnvWorkerID).WithValueFrom(corev1ac.EnvVarSource().
			WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name"))),
		corev1ac.EnvVar().WithName(worker.EnvHealthAddr).WithValue(healthAddr),
		corev1ac.EnvVar().WithName(worker.EnvMetricsAddr).WithValue(metricsAddr),
	}
	if c := pool.Spec.OrchestrationConcurrency; c != nil {
		env = append(env, corev1ac.EnvVar().WithName(worker.EnvOrchestrationConcurrency).WithValue(strconv.Itoa(int(*c))))
	}
	if c := pool.Spec.ActivityConcurrency; c != nil {
		env = append(env, corev1ac.EnvVar().WithName(worker.EnvActivityConcurrency).WithValue(strconv.Itoa(int(*c))))
	}
	if d := pool.Spec.LockTimeout; d != nil {
		env = append(env, corev1ac.EnvVar().WithName(worker.EnvLockTimeout).WithValue(d.Duration.String()))
	}
	if tags := pool.Spec.ActivityTags; len(tags) > 0 {
		// The worker reads provider.ParseTagFilter's form: the items joined by commas.
		env = append(env, corev1ac.EnvVar().WithName(worker.EnvActivityTags).WithValue(strings.Join(tags, ",")))
	}
	return mergeEnv(env, tmpl.Env)
}

func mergeEnv(base []*corev1ac.EnvVarApplyConfiguration, extra []corev1.EnvVar) []*corev1ac.EnvVarApplyConfiguration {
	index := map[string]int{}
	for i, e := range base {
		index[*e.Name] = i
	}
	for _, e := range extra {
		ac := applyConfig[corev1ac.EnvVarApplyConfiguration](e)
		if i, ok := index[e.Name]; ok {
			base[i] = ac
			continue
		}
		index[e.Name] = len(base)
		base = append(base, ac)
	}
	return base
}

// applyConfig converts a typed API value into its apply configuration; both
// share the JSON form, which is what server-side apply sends.
func applyConfig[T any](v any) *T {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode %T: %v", v, err)) // typed API values always encode
	}
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		panic(fmt.Sprintf("decode %T as %T: %v", v, out, err))
	}
	return out
}

// PodDefaults are the operator's defaults for what a pool's pod template
// leaves unset: a cluster where pods must use the host network (the test
// cluster) or where images are never pulled sets them once, on the operator.
type PodDefaults struct {
	HostNetwork     bool
	ImagePullPolicy corev1.PullPolicy
}

func (d PodDefaults) apply(t *v1.WorkerPodTemplate) *v1.WorkerPodTemplate {
	out := &v1.WorkerPodTemplate{}
	if t != nil {
		out = t.DeepCopy()
	}
	out.HostNetwork = out.HostNetwork || d.HostNetwork
	if out.ImagePullPolicy == "" {
		out.ImagePullPolicy = d.ImagePullPolicy
	}
	return out
}

// selectorString is the pods' selector as the scale subresource reports it.
func selectorString(pool *v1.WorkerPool) string {
	return metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: poolSelector(pool)})
}
