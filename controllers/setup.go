package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/duroxide/duroxide-go/runtime"
)

// Config tunes the operator's controllers.
type Config struct {
	// OrchestrationConcurrency is how many Orchestrations reconcile at once (default 8).
	OrchestrationConcurrency int
	// Resync re-reads running instances without a change report (default 30s).
	Resync time.Duration
	// PoolStatusInterval refreshes pool queue depths and counts (default 30s).
	PoolStatusInterval time.Duration
	Limits             StatusLimits
	// PodDefaults fill what pools' pod templates leave unset.
	PodDefaults PodDefaults
	// Open opens a pool's store (default openPostgres).
	Open OpenFunc
	// UIAddr is where the web view of the pools' stores is served ("" or
	// "0": not served).
	UIAddr string
	Logger *slog.Logger
	// Interceptors see the calls the operator makes to the pools' stores
	// (starts, events, terminations): the manager's tracing, for one.
	Interceptors []runtime.Interceptor
}

// The manager's metrics endpoint checks each scrape's token and its right
// to get /metrics with the API server (cmd/manager metricsOptions).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Setup adds the reconcilers (Orchestrations, WorkerPools, and the Secrets
// pools use), sharing one store client per pool and one Event recorder, to
// mgr. The recorder stops when ctx ends.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg Config) error {
	_, err := setup(ctx, mgr, cfg)
	return err
}

// setup is Setup, returning the pools' store clients.
func setup(ctx context.Context, mgr ctrl.Manager, cfg Config) (*poolStores, error) {
	if cfg.Open == nil {
		cfg.Open = openPostgres
	}
	if cfg.OrchestrationConcurrency <= 0 {
		cfg.OrchestrationConcurrency = 8
	}
	stores := &poolStores{Secrets: mgr.GetAPIReader(), Open: cfg.Open, Logger: cfg.Logger, Interceptors: cfg.Interceptors}
	if err := mgr.Add(stores); err != nil {
		return nil, fmt.Errorf("add store manager: %w", err)
	}
	recorder, err := startEventRecorder(ctx, mgr)
	if err != nil {
		return nil, err
	}
	orch := &orchestrationReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Stores: stores,
		Recorder: recorder, Limits: cfg.Limits, Resync: cfg.Resync}
	if err := orch.SetupWithManager(ctx, mgr, cfg.OrchestrationConcurrency); err != nil {
		return nil, fmt.Errorf("set up orchestration controller: %w", err)
	}
	pools := &workerPoolReconciler{Client: mgr.GetClient(), Stores: stores,
		Recorder: recorder, StatusInterval: cfg.PoolStatusInterval, PodDefaults: cfg.PodDefaults}
	if err := pools.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up workerpool controller: %w", err)
	}
	secrets := &poolSecretReconciler{Client: mgr.GetClient(), Recorder: recorder}
	if err := secrets.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up workerpool secret controller: %w", err)
	}
	if cfg.UIAddr != "" && cfg.UIAddr != "0" {
		if err := mgr.Add(serveViews{addr: cfg.UIAddr, views: newPoolViews(mgr.GetClient(), stores, cfg.Logger)}); err != nil {
			return nil, fmt.Errorf("add web view: %w", err)
		}
	}
	return stores, nil
}
