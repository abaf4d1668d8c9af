// Package controllers holds the operator's reconcilers: Orchestration (starts
// an instance in its pool's store and mirrors the instance into the object's
// status) and WorkerPool (owns the Deployment of workers and reports the
// store's queues). They stay thin: the runtime client and the provider do the
// work; the reconcilers translate between Kubernetes objects and those calls.
package controllers
