package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretKeyRef points at one key of a Secret in the pool's namespace.
type SecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key in the Secret whose value is the PostgreSQL connection string.
	// +optional
	// +kubebuilder:default=url
	Key string `json:"key,omitempty"`
}

// PostgresSpec says where the pool's store lives.
type PostgresSpec struct {
	// SecretRef holds the connection string. It is passed to the workers from
	// the Secret and never copied into the spec or status.
	SecretRef SecretKeyRef `json:"secretRef"`
	// Schema holds the pool's tables. Pools on distinct schemas of one database
	// are independent; pools on one schema share its instances, and may split
	// their activities by spec.activityTags.
	// +optional
	// +kubebuilder:default=duroxide
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,39}$`
	Schema string `json:"schema,omitempty"`
}

// WorkerPoolSpec describes a Deployment of workers.
type WorkerPoolSpec struct {
	// Replicas is the number of worker pods.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// Image is the worker image: a binary that registers the orchestrations and
	// activities and runs the dispatchers.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// Postgres is the pool's store.
	Postgres PostgresSpec `json:"postgres"`
	// OrchestrationConcurrency is how many turns a worker runs at once (default 32).
	// +optional
	// +kubebuilder:validation:Minimum=1
	OrchestrationConcurrency *int32 `json:"orchestrationConcurrency,omitempty"`
	// ActivityConcurrency is how many activities a worker runs at once (default 128).
	// +optional
	// +kubebuilder:validation:Minimum=1
	ActivityConcurrency *int32 `json:"activityConcurrency,omitempty"`
	// LockTimeout is the lease of a turn or activity before another worker may take it over.
	// +optional
	LockTimeout *metav1.Duration `json:"lockTimeout,omitempty"`
	// ActivityTags says which activities the pool's workers run, by the tag an
	// orchestration gives an activity (runtime.WithTag): each item is a tag,
	// "-" (untagged activities too) or "*" (every activity). Empty: untagged
	// activities only. Pools on one schema split the work: a pool with [gpu]
	// on GPU nodes runs the activities tagged gpu, the others run the rest.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self == '*' || self == '-' || self.matches('^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$')",message="an activity tag is 1 to 63 letters, digits, '_', '.' or '-', starting and ending with a letter or digit; '-' takes untagged activities too, '*' every activity"
	// +kubebuilder:validation:XValidation:rule="!self.exists(t, t == '*') || self.size() == 1",message="activityTags: '*' takes every activity, so it must be the only item"
	ActivityTags []string `json:"activityTags,omitempty"`
	// PodTemplate is merged into the worker pods the operator generates.
	// +optional
	PodTemplate *WorkerPodTemplate `json:"podTemplate,omitempty"`
	// UI configures the operator's web view of the pool's store.
	// +optional
	UI *WorkerPoolUI `json:"ui,omitempty"`
}

// WorkerPoolUI configures the operator's web view of a pool's store
// (/pools/NAMESPACE/NAME/ on the operator's ui Service).
type WorkerPoolUI struct {
	// Actions lets the view change the pool's instances: raise an event,
	// cancel, terminate, delete, each confirmed on a page of its own. Off,
	// the view only reads.
	// +optional
	Actions bool `json:"actions,omitempty"`
}

// WorkerPodTemplate holds the pod settings a cluster may need; the operator
// merges them into the worker pods it generates.
type WorkerPodTemplate struct {
	// Labels are added to the pods (the pool's own labels win).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to the pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// HostNetwork runs the workers in the node's network namespace. Replicas
	// then share the node's ports: each worker binds its health endpoint to a
	// free loopback port, the metrics endpoint is off, and no probes are set.
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// NodeSelector constrains the nodes the workers run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of the worker pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Resources of the worker container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// Env is added to the worker container; an entry named like one the
	// operator sets replaces it.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// ImagePullPolicy of the worker container.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// ServiceAccountName the workers run as.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// PriorityClassName of the worker pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// TerminationGracePeriodSeconds is how long a stopping worker may drain (default 30).
	// +optional
	// +kubebuilder:validation:Minimum=0
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// QueueDepths counts queued work in the pool's store.
type QueueDepths struct {
	Orchestrator int64 `json:"orchestrator"`
	Worker       int64 `json:"worker"`
	Delayed      int64 `json:"delayed"`
}

// InstanceCounts counts the pool's instances by status.
type InstanceCounts struct {
	Running    int64 `json:"running"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
	Terminated int64 `json:"terminated"`
}

// WorkerPoolStatus reports the Deployment and the store.
type WorkerPoolStatus struct {
	// Replicas is the number of worker pods.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of ready worker pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Selector is the pods' label selector, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// QueueDepths counts queued work.
	// +optional
	QueueDepths *QueueDepths `json:"queueDepths,omitempty"`
	// Instances counts instances by status.
	// +optional
	Instances *InstanceCounts `json:"instances,omitempty"`
	// ObservedGeneration is the generation last acted upon.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (at least one worker available and the store
	// reachable: what `kubectl wait --for=condition=Ready` waits for; False
	// with reason ScaledToZero at 0 replicas), Available, StoreReachable.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WorkerPool is a Deployment of duroxide workers on one PostgreSQL store.
// `kubectl scale workerpool NAME --replicas=N` changes its size.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=wp
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`,priority=1
// +kubebuilder:printcolumn:name="Tags",type=string,JSONPath=`.spec.activityTags`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WorkerPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkerPoolSpec   `json:"spec"`
	Status WorkerPoolStatus `json:"status,omitempty"`
}

// WorkerPoolList is a list of WorkerPools.
// +kubebuilder:object:root=true
type WorkerPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkerPool `json:"items"`
}
