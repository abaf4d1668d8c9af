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
	}
}

// Run runs the whole suite. Cases within a group run in parallel: each has
// its own store, and many wait on lock timeouts.
func Run(t *testing.T, f Factory) {
	for _, g := range Groups() {
		t.Run(g.Name, func(t *testing.T) { RunGroup(t, f, g) })
	}
}

// RunGroup runs one group's cases as parallel subtests.
func RunGroup(t *testing.T, f Factory, g Group) {
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Run(t, f)
		})
	}
}
