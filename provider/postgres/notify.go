package postgres

import (
	"context"
	"sync/atomic"
	"time"
)

// Wake-ups. After a commit that adds work, the provider wakes its own waiting
// fetchers at once and asks the notifier to tell other processes. The
// notifier sends NOTIFY in small transactions of its own, coalescing requests
// that arrive while one is in flight. NOTIFY inside the work transactions
// would hold PostgreSQL's notify-queue lock across each commit's WAL flush
// and so serialise every commit; here it is held by transactions that write
// nothing and flush nothing.

type channelKind int

const (
	orchestratorChannel channelKind = iota
	workerChannel
	statusChannel
	channelKinds
)

var channelSuffix = [channelKinds]string{"orch", "worker", "status"}

type notifier struct {
	pending [channelKinds]atomic.Bool
	kick    chan struct{}
}

func newNotifier() *notifier { return &notifier{kick: make(chan struct{}, 1)} }

// announce wakes local waiters on each kind and queues a NOTIFY for it.
func (p *Provider) announce(kinds ...channelKind) {
	for _, k := range kinds {
		p.signal(k).Notify()
		p.notifier.pending[k].Store(true)
	}
	select {
	case p.notifier.kick <- struct{}{}:
	default:
	}
}

// notifyLoop sends queued NOTIFYs until the provider closes. A failed NOTIFY
// is not retried: other processes' poll fallback covers it.
func (p *Provider) notifyLoop() {
	defer close(p.notifierDone)
	for {
		select {
		case <-p.notifier.kick:
		case <-p.closed:
			return
		}
		var channels []string
		for k := range channelKinds {
			if p.notifier.pending[k].Swap(false) {
				channels = append(channels, p.channel(channelSuffix[k]))
			}
		}
		if len(channels) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = p.pool.Exec(ctx, `SELECT pg_notify(c, '') FROM unnest($1::TEXT[]) AS c`, channels)
		cancel()
	}
}
