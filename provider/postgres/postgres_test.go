package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// The cases only PostgreSQL has, run with the rest under TestConformance's
// naming so that `-run Conformance` lists them too.
func TestConformancePostgres(t *testing.T) {
	providertest.RunGroup(t, schemaFactory{}, providertest.Group{Name: "Postgres", Cases: []providertest.Case{
		{Name: "SchemasIsolateTheirWork", Run: schemasIsolate},
		{Name: "IdleFetcherWokenByNotify", Run: idleFetcherWokenByNotify},
		{Name: "IdleWorkerWokenByNotify", Run: idleWorkerWokenByNotify},
		{Name: "WatchWokenByNotify", Run: watchWokenByNotify},
		{Name: "WatchDeliversChangesHeldBackByAnotherTransaction", Run: watchPastLongTransaction},
		{Name: "WatchNotHeldBackByUnrelatedTransaction", Run: watchNotHeldBackByUnrelatedTransaction},
		{Name: "WatchScanReportsUnannouncedChangeUnderAnnouncements", Run: watchScanReportsUnannounced},
		{Name: "ListenerReconnectReported", Run: listenerReconnectReported},
		{Name: "FetchNeverSkipsAnEarlierMessageAnotherTransactionHolds", Run: fetchTakesAGapFreePrefix},
		{Name: "QuietAckNotQuietDuringAFetch", Run: quietAckNotQuietDuringAFetch},
		{Name: "ConcurrentMigrationsOfOneSchema", Run: concurrentMigrations},
		{Name: "InvalidSchemaNamesRejected", Run: invalidSchemaNames},
		{Name: "ReservedWordSchemaQuoted", Run: reservedWordSchema},
		{Name: "ConnectionErrorsHideCredentials", Run: connectionErrorsHideCredentials},
		{Name: "RequireSchemaRefusesAMissingSchema", Run: requireSchema},
	}})
}

func start(instance string) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: instance, Name: "O", ExecutionID: 1}
}

func schemasIsolate(t *testing.T, f providertest.Factory) {
	a := f.NewProvider(t)
	b := f.NewProvider(t)
	ctx := t.Context()
	if err := a.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: start("only-in-a")}); err != nil {
		t.Fatal(err)
	}
	if err := a.EnqueueForWorker(ctx, provider.EnqueueRequest{Item: provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: "only-in-a", Name: "X", ExecutionID: 1, ID: 1}}); err != nil {
		t.Fatal(err)
	}
	if item, err := provider.FetchOne(ctx, b, provider.FetchRequest{LockFor: time.Minute, PollFor: 0}); err != nil || item != nil {
		t.Fatalf("schema b fetched %v (err %v) from schema a's queue", item, err)
	}
	if lease, err := b.FetchWorkItem(ctx, provider.FetchWorkRequest{LockFor: time.Minute}); err != nil || lease != nil {
		t.Fatalf("schema b fetched work %v (err %v) from schema a's queue", lease, err)
	}
	item, err := provider.FetchOne(ctx, a, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || item == nil || item.Instance != "only-in-a" {
		t.Fatalf("schema a: item %v, err %v", item, err)
	}
}

// peerWithSlowPoll opens a second handle whose poll fallback is far longer
// than the test's bound, so only a notification can wake it in time.
func peerWithSlowPoll(t *testing.T, p provider.Provider) *postgres.Provider {
	peer, err := postgres.Open(t.Context(), testURL(), postgres.Options{Schema: p.(*postgres.Provider).Schema(), PollInterval: time.Hour, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peer.Close() })
	return peer
}

func idleFetcherWokenByNotify(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t)
	waiter := peerWithSlowPoll(t, p)
	time.Sleep(200 * time.Millisecond) // let the listener connect
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := p.EnqueueForOrchestrator(context.Background(), provider.EnqueueRequest{Item: start("wake")}); err != nil {
			t.Errorf("enqueue: %v", err)
		}
	}()
	began := time.Now()
	item, err := provider.FetchOne(t.Context(), waiter, provider.FetchRequest{LockFor: time.Minute, PollFor: time.Minute})
	if err != nil || item == nil {
		t.Fatalf("long poll: item %v err %v", item, err)
	}
	// With a one-hour poll interval, returning at all within the minute shows
	// the NOTIFY woke it; the latency itself is measured by `make bench`.
	t.Logf("woken %v after the long poll began (enqueue at ~100ms)", time.Since(began).Round(time.Millisecond))
}

func idleWorkerWokenByNotify(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t)
	waiter := peerWithSlowPoll(t, p)
	time.Sleep(200 * time.Millisecond)
	go func() {
		time.Sleep(100 * time.Millisecond)
		item := provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: "i", Name: "A", ExecutionID: 1, ID: 1}
		if err := p.EnqueueForWorker(context.Background(), provider.EnqueueRequest{Item: item}); err != nil {
			t.Errorf("enqueue: %v", err)
		}
	}()
	lease, err := waiter.FetchWorkItem(t.Context(), provider.FetchWorkRequest{LockFor: time.Minute, PollFor: time.Minute})
	if err != nil || lease == nil {
		t.Fatalf("long poll: lease %v err %v", lease, err)
	}
}

func watchWokenByNotify(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t)
	watcher := peerWithSlowPoll(t, p)
	ch, err := watcher.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	createInstance(t, p, "w")
	select {
	case c := <-ch:
		if c.Instance != "w" || c.Status != provider.StatusRunning {
			t.Fatalf("change %+v", c)
		}
	case <-time.After(time.Minute):
		t.Fatal("watcher with a one-hour poll interval was not woken by the status notification")
	}
}

// Twenty providers (as twenty pods would) open one new schema at once.
func concurrentMigrations(t *testing.T, f providertest.Factory) {
	schema := "m_" + strings.TrimPrefix(pgtest.RandomSchema(), "t_")
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	opened := make([]*postgres.Provider, n)
	for i := range n {
		wg.Go(func() {
			opened[i], errs[i] = postgres.Open(t.Context(), testURL(), postgres.Options{Schema: schema, MaxConns: 2})
		})
	}
	wg.Wait()
	for i, p := range opened {
		if errs[i] != nil {
			t.Errorf("provider %d: %v", i, errs[i])
			continue
		}
		defer p.Close()
	}
	if t.Failed() {
		return
	}
	defer func() { _ = opened[0].DropSchema(context.Background()) }()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v (%v)", files, err)
	}
	var applied, distinct int
	err = opened[0].Pool().QueryRow(t.Context(),
		`SELECT count(*), count(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0`).Scan(&applied, &distinct)
	if err != nil || applied != len(files) || distinct != len(files) {
		t.Fatalf("migration rows: %d for %d versions (%v); want each of the %d migrations applied once", applied, distinct, err, len(files))
	}
	// Every handle works on the result.
	if err := opened[n-1].EnqueueForOrchestrator(t.Context(), provider.EnqueueRequest{Item: start("after-migrate")}); err != nil {
		t.Fatal(err)
	}
	if item, err := provider.FetchOne(t.Context(), opened[0], provider.FetchRequest{LockFor: time.Minute}); err != nil || item == nil {
		t.Fatalf("fetch after concurrent migration: %v %v", item, err)
	}
}

func invalidSchemaNames(t *testing.T, _ providertest.Factory) {
	for _, bad := range []string{"Upper", "1starts_with_digit", "has-dash", "x; DROP TABLE users", `quote"d`, "pg_catalog",
		"a_name_that_is_much_too_long_for_a_schema_here", " "} {
		_, err := postgres.Open(t.Context(), testURL(), postgres.Options{Schema: bad})
		if err == nil || !strings.Contains(err.Error(), "invalid schema name") {
			t.Errorf("schema %q: err %v, want an invalid schema name error", bad, err)
		}
	}
}

func reservedWordSchema(t *testing.T, _ providertest.Factory) {
	p, err := postgres.Open(t.Context(), testURL(), postgres.Options{Schema: "select", MaxConns: 2})
	if err != nil {
		t.Fatalf("open schema \"select\": %v", err)
	}
	defer p.Close()
	defer func() { _ = p.DropSchema(context.Background()) }()
	if err := p.EnqueueForOrchestrator(t.Context(), provider.EnqueueRequest{Item: start("q")}); err != nil {
		t.Fatal(err)
	}
	if item, err := provider.FetchOne(t.Context(), p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0}); err != nil || item == nil {
		t.Fatalf("fetch: %v %v", item, err)
	}
}

func connectionErrorsHideCredentials(t *testing.T, _ providertest.Factory) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://someone:s3cretPassw0rd@127.0.0.1:1/db?connect_timeout=2",
		"postgres://someone:s3cretPassw0rd@[::1:bad",
	} {
		_, err := postgres.Open(ctx, url, postgres.Options{})
		if err == nil {
			t.Fatalf("open %q succeeded", url)
		}
		if strings.Contains(err.Error(), "s3cretPassw0rd") {
			t.Fatalf("error reveals the password: %v", err)
		}
	}
}

func requireSchema(t *testing.T, f providertest.Factory) {
	existing := f.NewProvider(t).(*postgres.Provider)
	missing := pgtest.RandomSchema()
	_, err := postgres.Open(t.Context(), testURL(), postgres.Options{Schema: missing, RequireSchema: true})
	if !errors.Is(err, postgres.ErrSchemaNotFound) {
		t.Fatalf("open of missing schema %s: err %v, want ErrSchemaNotFound", missing, err)
	}
	var created bool
	if err := existing.Pool().QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", missing).Scan(&created); err != nil {
		t.Fatal(err)
	}
	if created {
		t.Fatalf("RequireSchema created schema %s", missing)
	}
	p, err := postgres.Open(t.Context(), testURL(), postgres.Options{Schema: existing.Schema(), RequireSchema: true})
	if err != nil {
		t.Fatalf("open of existing schema %s with RequireSchema: %v", existing.Schema(), err)
	}
	_ = p.Close()
}

// A transaction elsewhere in the cluster holds the snapshot's xmin below a
// change when the change is announced. The watcher, whose poll fallback is an
// hour, must still deliver it once that transaction ends.
func watchPastLongTransaction(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t)
	watcher := peerWithSlowPoll(t, p)
	ch, err := watcher.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	other := f.NewProvider(t).(*postgres.Provider) // another schema, as another pool would be
	blocker, err := other.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec(t.Context(), "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	createInstance(t, p, "held")
	time.Sleep(300 * time.Millisecond) // the watcher wakes, finds the change held back
	if err := blocker.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-ch:
		if c.Instance != "held" {
			t.Fatalf("change %+v", c)
		}
	case <-time.After(time.Minute):
		t.Fatal("change held back by another transaction was never delivered")
	}
}

// Another transaction (a concurrent fetcher's scan) holds the row of an
// instance's first message. The fetch must not deliver the later messages
// without it: the batch is a gap-free prefix, or nothing.
func fetchTakesAGapFreePrefix(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t).(*postgres.Provider)
	ctx := t.Context()
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: start("x")}); err != nil {
		t.Fatal(err)
	}
	event := provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: "x", Name: "approval", Input: `true`}
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: event}); err != nil {
		t.Fatal(err)
	}
	holder, err := p.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(context.Background()) }()
	if _, err := holder.Exec(ctx, `SELECT id FROM orchestrator_queue WHERE instance_id = 'x' ORDER BY id LIMIT 1 FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	if item, err := provider.FetchOne(ctx, p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0}); err != nil || item != nil {
		var kinds []provider.WorkItemKind
		if item != nil {
			for _, m := range item.Messages {
				kinds = append(kinds, m.Kind)
			}
		}
		t.Fatalf("fetch while the start message is held: %v (err %v), want nothing", kinds, err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	item, err := provider.FetchOne(ctx, p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || item == nil || len(item.Messages) != 2 || item.Messages[0].Kind != provider.WorkStartOrchestration {
		t.Fatalf("fetch after release: %+v, %v; want start then event", item, err)
	}
}

// createInstance starts an instance and acks its first turn, which records
// the status change a watcher should report.
// A status change whose NOTIFY never came (its process died after the
// commit) is reported by the watcher's scan, even while announcements of
// other changes keep waking the watcher: the scan keeps its own pace.
func watchScanReportsUnannounced(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t)
	createInstance(t, p, "quiet")
	watcher, err := postgres.Open(t.Context(), testURL(), postgres.Options{Schema: p.(*postgres.Provider).Schema(), PollInterval: 200 * time.Millisecond, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watcher.Close() })
	ch, err := watcher.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			createInstance(t, p, fmt.Sprintf("loud-%d", i))
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(time.Second) // the watcher's first scans are over; announcements keep it awake
	// The change, stamped as an ack stamps it, with no NOTIFY.
	if _, err := p.(*postgres.Provider).Pool().Exec(t.Context(), `UPDATE instances
		SET status_seq = nextval('status_seq'), status_xid = pg_current_xact_id()::TEXT::BIGINT WHERE instance_id = 'quiet'`); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c := <-ch:
			if c.Instance == "quiet" {
				return
			}
		case <-deadline:
			t.Fatal("the unannounced change was not reported within 10s while announcements kept coming")
		}
	}
}

func createInstance(t *testing.T, p provider.Provider, instance string) {
	t.Helper()
	if err := p.EnqueueForOrchestrator(t.Context(), provider.EnqueueRequest{Item: start(instance)}); err != nil {
		t.Fatal(err)
	}
	item, err := provider.FetchOne(t.Context(), p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || item == nil {
		t.Fatalf("fetch: %v %v", item, err)
	}
	err = providertest.AckTurn(t.Context(), p, item.LockToken, provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted}},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: "O"}})
	if err != nil {
		t.Fatal(err)
	}
}
