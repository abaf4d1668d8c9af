package controllers_test

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

// hangingOpen opens SQLite stores, except for the connection string "hang":
// that open signals `entered` and blocks until `release` is closed, like a
// database that accepts the TCP connection and never answers.
type hangingOpen struct {
	entered, release chan struct{}
	opens            atomic.Int32
}

func newHangingOpen() *hangingOpen {
	return &hangingOpen{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (h *hangingOpen) open(ctx context.Context, dsn, _ string) (provider.Provider, error) {
	h.opens.Add(1)
	if dsn == "hang" {
		h.entered <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return sqlite.OpenMemory(ctx, sqlite.Options{})
}

func storePool(ns, name, secret string) *v1.WorkerPool {
	return &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.WorkerPoolSpec{Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: secret}}}}
}

func TestStoresOpenOfOnePoolDoesNotBlockAnother(t *testing.T) {
	ns := namespace(t)
	createSecret(t, ns, "hanging", "hang")
	createSecret(t, ns, "fine", "fine")
	h := newHangingOpen()
	// The long connect timeout makes "slow gave up first" mean serialised, not a slow machine.
	s := &controllers.Stores{Secrets: k8s, Open: h.open, ConnectTimeout: 2 * time.Minute, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	defer s.CloseAll()
	ctx := context.Background()

	hungDone := make(chan error, 1)
	go func() {
		_, err := s.ForPool(ctx, storePool(ns, "slow", "hanging"))
		hungDone <- err
	}()
	<-h.entered

	fineDone := make(chan error, 1)
	go func() {
		_, err := s.ForPool(ctx, storePool(ns, "quick", "fine"))
		fineDone <- err
	}()
	// Pool slow's open ends only when released or at the Stores' connect
	// timeout; pool quick must be done before either.
	select {
	case err := <-fineDone:
		if err != nil {
			t.Fatalf("open of pool quick: %v", err)
		}
	case err := <-hungDone:
		t.Fatalf("pool quick was still waiting when pool slow's open gave up (%v): opens of different pools are serialised", err)
	}
	if !s.IsOpen(types.NamespacedName{Namespace: ns, Name: "quick"}) {
		t.Error("pool quick's store is not open")
	}
	close(h.release)
	if err := <-hungDone; err != nil {
		t.Fatalf("open of pool slow after release: %v", err)
	}
}

func TestStoresOpenAPoolOnceUnderConcurrentCallers(t *testing.T) {
	ns := namespace(t)
	createSecret(t, ns, "hanging", "hang")
	h := newHangingOpen()
	s := &controllers.Stores{Secrets: k8s, Open: h.open}
	defer s.CloseAll()
	pool := storePool(ns, "busy", "hanging")

	const callers = 20
	stores := make([]*controllers.Store, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			st, err := s.ForPool(context.Background(), pool)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
			stores[i] = st
		})
	}
	<-h.entered // the first open is in progress while the other callers queue
	close(h.release)
	wg.Wait()
	if n := h.opens.Load(); n != 1 {
		t.Errorf("%d callers opened the store %d times, want once", callers, n)
	}
	for i, st := range stores {
		if st != stores[0] {
			t.Errorf("caller %d got a different store client than caller 0", i)
		}
	}
}
