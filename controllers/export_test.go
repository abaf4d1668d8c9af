package controllers

import (
	"context"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the envtest tests (package controllers_test) use of the package's
// unexported side.
type (
	Stores = poolStores
	Store  = poolStore
)

const (
	Finalizer           = instanceFinalizer
	PoolFinalizer       = poolFinalizer
	SecretFinalizer     = secretFinalizer
	CondInstanceIDInUse = condInstanceIDInUse
)

// OwnerOf names an Orchestration as its instance records its owner.
var OwnerOf = ownerOf

// SetupWithStores is Setup, returning the pools' store clients.
func SetupWithStores(ctx context.Context, mgr ctrl.Manager, cfg Config) (*Stores, error) {
	return setup(ctx, mgr, cfg)
}

// NewEventBroadcasterForTest is newEventBroadcaster, for the envtest tests.
func NewEventBroadcasterForTest(sink events.EventSink, log logr.Logger) events.EventBroadcaster {
	return newEventBroadcaster(sink, log)
}

// PoolViews is the operator's web view of the pools' stores.
func PoolViews(pools client.Reader, stores *Stores) http.Handler {
	return newPoolViews(pools, stores, nil).Handler()
}
