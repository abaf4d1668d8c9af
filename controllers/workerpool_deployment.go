package controllers

import (
	"strconv"

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

// LabelPool marks the pods (and the Deployment) of a pool.
const LabelPool = "duroxide.io/pool"

// fieldOwner is the operator's server-side apply identity.
const fieldOwner = "duroxide-operator"

func poolLabels(pool *v1.WorkerPool) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "duroxide-worker",
		"app.kubernetes.io/instance":   pool.Name,
		"app.kubernetes.io/managed-by": fieldOwner,
		LabelPool:                      pool.Name,
	}
}

// poolSelector selects the pool's pods; it never changes, as a Deployment's
// selector cannot.
func poolSelector(pool *v1.WorkerPool) map[string]string {
	return map[string]string{LabelPool: pool.Name}
}

// desiredDeployment is the Deployment the pool owns, as a server-side apply
// configuration: only the fields the operator sets are sent and owned, so
// the API server's defaults cause no endless updates.
func desiredDeployment(pool *v1.WorkerPool) *appsv1ac.DeploymentApplyConfiguration {
	labels := poolLabels(pool)
	owner := metav1ac.OwnerReference().
		WithAPIVersion(v1.GroupVersion.String()).WithKind("WorkerPool").
		WithName(pool.Name).WithUID(pool.UID).
		WithController(true).WithBlockOwnerDeletion(true)
	return appsv1ac.Deployment(pool.Name, pool.Namespace).
		WithLabels(labels).
		WithOwnerReferences(owner).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(ptr.Deref(pool.Spec.Replicas, 1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(poolSelector(pool))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels).
				WithSpec(podSpec(pool))))
}

func podSpec(pool *v1.WorkerPool) *corev1ac.PodSpecApplyConfiguration {
	return corev1ac.PodSpec().
		WithTerminationGracePeriodSeconds(30).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(65532).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(workerContainer(pool))
}

func workerContainer(pool *v1.WorkerPool) *corev1ac.ContainerApplyConfiguration {
	probe := func(path string) *corev1ac.ProbeApplyConfiguration {
		return corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromString("health"))).
			WithPeriodSeconds(10).WithFailureThreshold(3)
	}
	return corev1ac.Container().
		WithName("worker").
		WithImage(pool.Spec.Image).
		WithEnv(workerEnv(pool)...).
		WithPorts(
			corev1ac.ContainerPort().WithName("health").WithContainerPort(healthPort),
			corev1ac.ContainerPort().WithName("metrics").WithContainerPort(metricsPort)).
		WithLivenessProbe(probe("/healthz")).
		WithReadinessProbe(probe("/readyz")).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")))
}

// workerEnv passes the pool's settings to the worker (package worker reads
// them). The connection string is a reference to the Secret, never its value.
func workerEnv(pool *v1.WorkerPool) []*corev1ac.EnvVarApplyConfiguration {
	cfg := configOf(pool)
	env := []*corev1ac.EnvVarApplyConfiguration{
		corev1ac.EnvVar().WithName(worker.EnvPool).WithValue(pool.Name),
		corev1ac.EnvVar().WithName(worker.EnvPostgresURL).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(cfg.secret).WithKey(cfg.key))),
		corev1ac.EnvVar().WithName(worker.EnvPostgresSchema).WithValue(cfg.schema),
		corev1ac.EnvVar().WithName(worker.EnvWorkerID).WithValueFrom(corev1ac.EnvVarSource().
			WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name"))),
		corev1ac.EnvVar().WithName(worker.EnvHealthAddr).WithValue(":" + strconv.Itoa(healthPort)),
		corev1ac.EnvVar().WithName(worker.EnvMetricsAddr).WithValue(":" + strconv.Itoa(metricsPort)),
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
	return env
}

// selectorString is the pods' selector as the scale subresource reports it.
func selectorString(pool *v1.WorkerPool) string {
	return metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: poolSelector(pool)})
}
