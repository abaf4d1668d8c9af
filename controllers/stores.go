package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/runtime"
)

// OpenFunc opens a pool's store. The operator uses openPostgres; the
// connection string comes from the pool's Secret and must not be logged.
type OpenFunc func(ctx context.Context, connString, schema string) (provider.Provider, error)

// openPostgres opens a PostgreSQL store. The operator only starts, signals
// and reads instances: a connection per concurrent reconcile is plenty.
func openPostgres(ctx context.Context, connString, schema string) (provider.Provider, error) {
	return postgres.Open(ctx, connString, postgres.Options{Schema: schema, MaxConns: 10})
}

// poolStore is one pool's store as the operator uses it.
type poolStore struct {
	Client *runtime.Client

	provider provider.Provider
	config   storeConfig
	stop     context.CancelFunc
	done     chan struct{}
	workers  workerCache
}

// storeConfig identifies what a poolStore was opened from; a change reopens it.
type storeConfig struct {
	secret, key, schema string
	secretVersion       string
}

// changeFunc receives the instance status changes of a pool's store.
type changeFunc func(pool types.NamespacedName, instance string)

// storeError says why a pool's store is not available; Reason is a condition reason.
type storeError struct {
	Reason string
	Err    error
}

func (e *storeError) Error() string { return e.Err.Error() }
func (e *storeError) Unwrap() error { return e.Err }

// Condition reasons for an unavailable store.
const (
	reasonSecretNotFound   = "SecretNotFound"
	reasonSecretUnreadable = "SecretUnreadable"
	reasonSecretInvalid    = "SecretInvalid"
	reasonStoreUnreachable = "StoreUnreachable"
)

// poolStores shares one store client per WorkerPool between the reconcilers. A
// client is opened on first use, reopened when the pool's store settings or
// Secret change, and closed when the pool goes. Failed opens are retried no
// sooner than a doubling backoff, so many Orchestrations of an unreachable
// pool do not each hammer the database.
type poolStores struct {
	// Secrets reads the pools' Secrets past the cache: the operator caches
	// Secrets' metadata only (to notice one appear or change), never their data.
	Secrets client.Reader
	Open    OpenFunc
	// OnChange is called for every status change the store reports.
	OnChange changeFunc
	Logger   *slog.Logger
	// MinBackoff and MaxBackoff bound the delay between failed opens (default 1s, 1m).
	MinBackoff, MaxBackoff time.Duration
	// ConnectTimeout bounds one open (default 10s).
	ConnectTimeout time.Duration
	// Interceptors see each pool client's calls (Config.Interceptors).
	Interceptors []runtime.Interceptor

	mu       sync.Mutex // guards the maps below, never held while connecting
	byPool   map[types.NamespacedName]*poolStore
	failures map[types.NamespacedName]*openFailure
	// opening serialises opens and closes per pool, so a pool whose database
	// hangs delays only its own reconciles, and a pool is opened once even
	// when many of its Orchestrations ask at the same time. Entries stay
	// (a mutex per pool name ever seen) so two callers never hold different
	// locks for one pool.
	opening map[types.NamespacedName]*sync.Mutex
}

type openFailure struct {
	err     *storeError
	config  storeConfig
	retryAt time.Time
	backoff time.Duration
}

func (s *poolStores) init() {
	if s.byPool == nil {
		s.byPool = map[types.NamespacedName]*poolStore{}
		s.failures = map[types.NamespacedName]*openFailure{}
		s.opening = map[types.NamespacedName]*sync.Mutex{}
	}
	if s.MinBackoff <= 0 {
		s.MinBackoff = time.Second
	}
	if s.MaxBackoff <= 0 {
		s.MaxBackoff = time.Minute
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.ConnectTimeout <= 0 {
		s.ConnectTimeout = 10 * time.Second
	}
}

// ForPool returns the pool's store, opening it if needed. A *storeError
// says why it is not available; RetryAfter says when to ask again.
func (s *poolStores) ForPool(ctx context.Context, pool *v1.WorkerPool) (*poolStore, error) {
	key := types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name}
	want := configOf(pool)
	if st, ok, err := s.cached(key, want); ok {
		return st, err
	}
	lock := s.poolLock(key)
	lock.Lock()
	defer lock.Unlock()
	// Another reconcile may have opened it (or failed to) while this one waited.
	if st, ok, err := s.cached(key, want); ok {
		return st, err
	}
	return s.open(ctx, key, want)
}

// cached returns the open store or the recent failure for the pool's current
// settings; ok is false when the store has to be (re)opened.
func (s *poolStores) cached(key types.NamespacedName, want storeConfig) (*poolStore, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if st, ok := s.byPool[key]; ok && st.config.sameSpec(want) {
		return st, true, nil
	}
	if f, ok := s.failures[key]; ok && f.config.sameSpec(want) && time.Now().Before(f.retryAt) {
		return nil, true, f.err
	}
	return nil, false, nil
}

func (s *poolStores) poolLock(key types.NamespacedName) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	l, ok := s.opening[key]
	if !ok {
		l = &sync.Mutex{}
		s.opening[key] = l
	}
	return l
}

// RetryAfter is how long until a failed pool's store is tried again.
func (s *poolStores) RetryAfter(pool types.NamespacedName) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if f, ok := s.failures[pool]; ok {
		return max(time.Until(f.retryAt), 0) + 10*time.Millisecond
	}
	return s.MinBackoff
}

// Refresh reopens the pool's store when its Secret changed since it was opened.
// A Secret that cannot be read is left to ForPool to report.
func (s *poolStores) Refresh(ctx context.Context, pool *v1.WorkerPool) {
	key := types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name}
	secret, err := s.readSecret(ctx, pool)
	if err != nil {
		return
	}
	s.mu.Lock()
	st, ok := s.byPool[key]
	stale := ok && st.config.secretVersion != secret.ResourceVersion
	s.mu.Unlock()
	if stale {
		s.Logger.Info("pool secret changed; reopening its store", "pool", key.String())
		s.Close(key)
	}
}

// open (re)opens the pool's store; the caller holds the pool's lock.
func (s *poolStores) open(ctx context.Context, key types.NamespacedName, want storeConfig) (*poolStore, error) {
	s.forget(key)
	p, cfg, serr := s.connect(ctx, key, want)
	if serr != nil {
		s.recordFailure(key, want, serr)
		return nil, serr
	}
	st := &poolStore{Client: runtime.NewClient(p, runtime.ClientInterceptors(s.Interceptors...)), provider: p, config: cfg, done: make(chan struct{})}
	wctx, stop := context.WithCancel(context.Background())
	st.stop = stop
	changes, err := p.Watch(wctx)
	if err != nil {
		stop()
		_ = p.Close()
		serr := &storeError{Reason: reasonStoreUnreachable, Err: fmt.Errorf("watch store of pool %s: %w", key, err)}
		s.recordFailure(key, want, serr)
		return nil, serr
	}
	go st.forward(changes, key, s.OnChange)
	s.mu.Lock()
	s.byPool[key] = st
	delete(s.failures, key)
	s.mu.Unlock()
	s.Logger.Info("opened pool store", "pool", key.String(), "schema", cfg.schema)
	return st, nil
}

func (s *poolStores) connect(ctx context.Context, key types.NamespacedName, want storeConfig) (provider.Provider, storeConfig, *storeError) {
	secret := &corev1.Secret{}
	if err := s.Secrets.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: want.secret}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, want, &storeError{Reason: reasonSecretNotFound, Err: fmt.Errorf("secret %s/%s (the store's connection string) not found", key.Namespace, want.secret)}
		}
		return nil, want, &storeError{Reason: reasonSecretUnreadable, Err: fmt.Errorf("read secret %s/%s: %w", key.Namespace, want.secret, err)}
	}
	dsn := string(secret.Data[want.key])
	if dsn == "" {
		return nil, want, &storeError{Reason: reasonSecretInvalid, Err: fmt.Errorf("secret %s/%s has no key %q (or it is empty)", key.Namespace, want.secret, want.key)}
	}
	want.secretVersion = secret.ResourceVersion
	octx, cancel := context.WithTimeout(ctx, s.connectTimeout())
	defer cancel()
	p, err := s.Open(octx, dsn, want.schema)
	if err != nil {
		// Open errors never contain the connection string (the providers redact it).
		return nil, want, &storeError{Reason: reasonStoreUnreachable, Err: fmt.Errorf("open store of pool %s: %w", key, err)}
	}
	return p, want, nil
}

func (s *poolStores) connectTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ConnectTimeout
}

func (s *poolStores) readSecret(ctx context.Context, pool *v1.WorkerPool) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := s.Secrets.Get(ctx, types.NamespacedName{Namespace: pool.Namespace, Name: pool.Spec.Postgres.SecretRef.Name}, secret)
	return secret, err
}

// forget closes the pool's open store, if any, keeping its failure record.
func (s *poolStores) forget(key types.NamespacedName) {
	s.mu.Lock()
	old, ok := s.byPool[key]
	delete(s.byPool, key)
	s.mu.Unlock()
	if ok {
		old.close()
	}
}

func (s *poolStores) recordFailure(key types.NamespacedName, cfg storeConfig, err *storeError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failures[key]
	if f == nil || !f.config.sameSpec(cfg) {
		f = &openFailure{config: cfg}
		s.failures[key] = f
	}
	f.backoff = min(max(f.backoff*2, s.MinBackoff), s.MaxBackoff)
	f.retryAt = time.Now().Add(f.backoff)
	f.err = err
	s.Logger.Info("pool store unavailable", "pool", key.String(), "reason", err.Reason, "error", err.Error(), "retryIn", f.backoff.String())
}

// Close closes the pool's store, if open, and forgets its failures.
// It waits for an open of the same pool in progress, so that open cannot
// leave a client behind.
func (s *poolStores) Close(pool types.NamespacedName) {
	lock := s.poolLock(pool)
	lock.Lock()
	defer lock.Unlock()
	s.mu.Lock()
	st, ok := s.byPool[pool]
	delete(s.byPool, pool)
	delete(s.failures, pool)
	s.mu.Unlock()
	if ok {
		st.close()
		s.Logger.Info("closed pool store", "pool", pool.String())
	}
}

// ForgetFailure drops the pool's recorded open failure, so the next ForPool
// tries at once: its Secret just changed or appeared.
func (s *poolStores) ForgetFailure(pool types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	delete(s.failures, pool)
}

// IsOpen reports whether the pool's store client is open.
func (s *poolStores) IsOpen(pool types.NamespacedName) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.byPool[pool]
	return ok
}

// CloseAll closes every store; the manager calls it on shutdown.
func (s *poolStores) CloseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, st := range s.byPool {
		delete(s.byPool, key)
		st.close()
	}
}

// Start lets poolStores run as a manager Runnable: it closes every store when the manager stops.
func (s *poolStores) Start(ctx context.Context) error {
	<-ctx.Done()
	s.CloseAll()
	return nil
}

func (st *poolStore) forward(changes <-chan provider.StatusChange, pool types.NamespacedName, onChange changeFunc) {
	defer close(st.done)
	for c := range changes {
		if onChange != nil {
			onChange(pool, c.Instance)
		}
	}
}

func (st *poolStore) close() {
	st.stop()
	<-st.done
	_ = st.provider.Close()
}

func configOf(pool *v1.WorkerPool) storeConfig {
	key := pool.Spec.Postgres.SecretRef.Key
	if key == "" {
		key = "url"
	}
	schema := pool.Spec.Postgres.Schema
	if schema == "" {
		schema = postgres.DefaultSchema
	}
	return storeConfig{secret: pool.Spec.Postgres.SecretRef.Name, key: key, schema: schema}
}

// label names the store in the operator's metrics: pools whose labels are
// equal read one store (Secret names, keys and schemas hold no '/').
func (c storeConfig) label() string { return c.secret + "/" + c.key + "/" + c.schema }

func (c storeConfig) sameSpec(o storeConfig) bool {
	return c.secret == o.secret && c.key == o.key && c.schema == o.schema
}

// isStoreError reports whether err is a *storeError and returns it.
func isStoreError(err error) (*storeError, bool) {
	var se *storeError
	ok := errors.As(err, &se)
	return se, ok
}
