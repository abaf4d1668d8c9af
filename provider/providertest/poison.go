package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func poisonCases() []Case {
	return []Case{
		{Name: "OrchestrationAttemptCountRisesOnEachFetch", Run: orchAttemptsRise},
		{Name: "OrchestrationAttemptCountRisesAfterLockExpiry", Run: orchAttemptsRiseAfterExpiry},
		{Name: "OrchestrationAttemptCountReachesLimit", Run: orchAttemptsReachLimit},
		{Name: "OrchestrationAbandonCanIgnoreAttempt", Run: orchAbandonIgnoresAttempt},
		{Name: "OrchestrationAttemptCountStartsOverForNewMessages", Run: orchAttemptsStartOver},
		{Name: "WorkItemAttemptCountRisesOnEachFetch", Run: workAttemptsRise},
		{Name: "WorkItemAttemptCountRisesAfterLockExpiry", Run: workAttemptsRiseAfterExpiry},
		{Name: "WorkItemAbandonCanIgnoreAttempt", Run: workAbandonIgnoresAttempt},
	}
}

func orchAttemptsRise(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	for want := 1; want <= 3; want++ {
		item := e.fetch()
		e.wantEqual(item.AttemptCount, want, "attempt count")
		e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	}
}

func orchAttemptsRiseAfterExpiry(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	e.wantEqual(e.fetch().AttemptCount, 2, "attempt count after a crashed holder")
}

// A dispatcher with a poison limit of 5 sees attempt 6 and gives up.
func orchAttemptsReachLimit(t *testing.T, f Factory) {
	e := newEnv(t, f)
	const limit = 5
	e.enqueue(startItem("a"))
	attempts := 0
	for {
		item := e.fetch()
		attempts = item.AttemptCount
		if attempts > limit {
			e.ack(item, firstTurn(item)) // the runtime records the poisoning
			break
		}
		e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	}
	e.wantEqual(attempts, limit+1, "attempt at which the limit was passed")
	e.fetchNone()
}

func orchAbandonIgnoresAttempt(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	for range 3 {
		item := e.fetch()
		e.wantEqual(item.AttemptCount, 1, "attempt count with ignored attempts")
		e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true}), "abandon ignoring attempt")
	}
}

func orchAttemptsStartOver(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	item = e.fetch()
	e.wantEqual(item.AttemptCount, 2, "attempts before ack")
	e.ack(item, firstTurn(item))
	e.enqueue(externalItem("a", "next"))
	e.wantEqual(e.fetch().AttemptCount, 1, "attempt count of a new message")
}

func workAttemptsRise(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	for want := 1; want <= 3; want++ {
		lease := e.fetchWork()
		e.wantEqual(lease.AttemptCount, want, "attempt count")
		e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken}), "abandon")
	}
}

func workAttemptsRiseAfterExpiry(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	e.fetchWorkLock(shortLock)
	time.Sleep(pastShortLock)
	e.wantEqual(e.fetchWork().AttemptCount, 2, "attempt count after a crashed holder")
}

func workAbandonIgnoresAttempt(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	for range 3 {
		lease := e.fetchWork()
		e.wantEqual(lease.AttemptCount, 1, "attempt count with ignored attempts")
		e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken, IgnoreAttempt: true}), "abandon ignoring attempt")
	}
}
