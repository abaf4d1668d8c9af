// Package providertest is the conformance suite every duroxide-go provider
// runs. Call Run from a provider's tests with a Factory that returns a fresh,
// isolated store per case:
//
//	func TestConformance(t *testing.T) { providertest.Run(t, myFactory{}) }
//
// Each case proves one behaviour of the provider contract (see package
// provider); the groups follow docs/CONFORMANCE.md.
package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// Factory creates and manipulates stores for the suite.
type Factory interface {
	// NewProvider returns a provider on a fresh, isolated store. The factory
	// closes it and removes the store when the test ends. The provider must also
	// implement provider.Admin.
	NewProvider(t testing.TB) provider.Provider
	// OpenPeer opens another provider on the same store as p, as a second process
	// would, and closes it when the test ends.
	OpenPeer(t testing.TB, p provider.Provider) provider.Provider
	// CorruptHistoryEvent overwrites the stored form of one history event with
	// bytes that cannot be decoded.
	CorruptHistoryEvent(t testing.TB, p provider.Provider, instance string, executionID, eventID int64)
	// CorruptOrchestratorMessages overwrites the stored form of every queued
	// orchestrator message of instance.
	CorruptOrchestratorMessages(t testing.TB, p provider.Provider, instance string)
	// CorruptWorkItems overwrites the stored form of every worker-queue item of instance.
	CorruptWorkItems(t testing.TB, p provider.Provider, instance string)
}

// Case is one conformance case.
type Case struct {
	Name string
	Run  func(t *testing.T, f Factory)
	// Path is the fast path the case proves, if any: a store that declines
	// it runs the path's Declined case instead.
	Path FastPath
}

// FastPath names one of the contract's fast paths. A store may take it or
// decline it with the answer the contract gives for each; the suite proves
// whichever the store says it does (Declines).
type FastPath string

const (
	// PathLease: TurnCommit.Lease; declined, Committed.Leases is empty and
	// the activities are queued for any worker.
	PathLease FastPath = "Lease"
	// PathNextTurn: CommitRequest.LockNextFor; declined, Committed.Next is
	// nil and the turn waits for a fetch.
	PathNextTurn FastPath = "NextTurn"
	// PathDirectStart: a TurnNew commit; declined, ErrUnsupported and
	// nothing written.
	PathDirectStart FastPath = "DirectStart"
	// PathEagerStart: StartRequest.LockFor; declined, no turn and the start
	// queued.
	PathEagerStart FastPath = "EagerStart"
	// PathCachedTurn: FetchRequest.FromCache and Deliver, and TurnCached
	// commits; declined, no cached turn is ever returned.
	PathCachedTurn FastPath = "CachedTurn"
	// PathQuiet: ActivityResult.QuietAfter; declined, Committed.Quiet is
	// false and the result wakes dispatchers as a plain ack does.
	PathQuiet FastPath = "QuietAck"
)

// FastPaths lists every fast path.
func FastPaths() []FastPath {
	return []FastPath{PathLease, PathNextTurn, PathDirectStart, PathEagerStart, PathCachedTurn, PathQuiet}
}

// Option configures Run.
type Option func(*config)

type config struct {
	declines map[FastPath]bool
}

// Declines says the store declines paths: the cases proving each path are
// replaced by the Declined group's cases, which prove the store declines it
// as the contract says and loses nothing.
func Declines(paths ...FastPath) Option {
	return func(c *config) {
		for _, p := range paths {
			c.declines[p] = true
		}
	}
}

func newConfig(opts []Option) config {
	c := config{declines: map[FastPath]bool{}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Group is a named set of cases.
type Group struct {
	Name  string
	Cases []Case
}

// Groups returns every group of the suite, in the order Run runs them.
func Groups() []Group {
	return []Group{
		{"Atomicity", atomicityCases()},
		{"Errors", errorCases()},
		{"InstanceCreation", creationCases()},
		{"Starts", startCases()},
		{"InstanceLocking", lockingCases()},
		{"LockExpiry", expiryCases()},
		{"Polling", pollingCases()},
		{"QueueSemantics", queueCases()},
		{"MultiExecution", multiExecutionCases()},
		{"Management", managementCases()},
		{"Listing", listingCases()},
		{"Rewinds", rewindCases()},
		{"CustomStatus", customStatusCases()},
		{"Cancellation", cancellationCases()},
		{"Timers", timerCases()},
		{"Deletion", deletionCases()},
		{"BulkDeletion", bulkDeletionCases()},
		{"Pruning", pruningCases()},
		{"PoisonMessages", poisonCases()},
		{"MultiFetch", multiFetchCases()},
		{"Watch", watchCases()},
		{"Concurrency", concurrencyCases()},
		{"Workers", workerCases()},
		{"Delivery", deliveryCases()},
		{"InstanceFetch", instanceFetchCases()},
		{"Shortcuts", shortcutCases()},
		{"HistoryReads", historyReadCases()},
		{"CachedTurns", cachedTurnCases()},
		{"QuietAcks", quietAckCases()},
		{"Tags", tagCases()},
		{"Values", valueCases()},
		{"Versioning", versionCases()},
		{"Sessions", sessionCases()},
	}
}

// Run runs the whole suite. Cases within a group run in parallel: each has
// its own store, and many wait on lock timeouts. With Declines, the
// Declined group runs too.
func Run(t *testing.T, f Factory, opts ...Option) {
	cfg := newConfig(opts)
	for _, g := range Groups() {
		t.Run(g.Name, func(t *testing.T) { cfg.runGroup(t, f, g) })
	}
	if declined := cfg.declinedCases(); len(declined) > 0 {
		t.Run("Declined", func(t *testing.T) { runCases(t, f, declined) })
	}
}

// RunGroup runs one group's cases as parallel subtests, but for those of a
// fast path the store declines (Declines).
func RunGroup(t *testing.T, f Factory, g Group, opts ...Option) {
	newConfig(opts).runGroup(t, f, g)
}

func (cfg config) runGroup(t *testing.T, f Factory, g Group) {
	var cases []Case
	for _, c := range g.Cases {
		if !cfg.declines[c.Path] {
			cases = append(cases, c)
		}
	}
	runCases(t, f, cases)
}

func runCases(t *testing.T, f Factory, cases []Case) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Run(t, f)
		})
	}
}

// declinedCases are the cases proving the declined paths are declined.
func (cfg config) declinedCases() []Case {
	var out []Case
	for _, c := range declineCases() {
		if cfg.declines[c.Path] {
			out = append(out, c)
		}
	}
	return out
}
