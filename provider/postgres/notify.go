package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
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
	// origin is this provider's payload on the work channels: its listener
	// skips its own notifications, whose waiters announce woke already
	// (each extra wake costs a fetch that finds nothing).
	origin  string
	pending [channelKinds]atomic.Bool
	kick    chan struct{}

	mu      sync.Mutex
	changed map[string]announcedChange // status changes for the status payload
}

func newNotifier() *notifier {
	return &notifier{origin: uuid.NewString(), kick: make(chan struct{}, 1)}
}

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

// announceRemote queues a NOTIFY for kind, for other processes, without
// waking this provider's waiters.
func (p *Provider) announceRemote(k channelKind) {
	p.notifier.pending[k].Store(true)
	select {
	case p.notifier.kick <- struct{}{}:
	default:
	}
}

// announceStatus hands c to local watchers and queues a status NOTIFY
// carrying it.
func (p *Provider) announceStatus(c announcedChange) {
	if c.Seq == 0 {
		p.feed.publish([]string{c.Instance}, nil)
	} else {
		p.feed.publish(nil, []announcedChange{c})
	}
	p.notifier.mu.Lock()
	if p.notifier.changed == nil {
		p.notifier.changed = map[string]announcedChange{}
	}
	noteChange(p.notifier.changed, c)
	p.notifier.mu.Unlock()
	p.announce(statusChannel)
}

func (n *notifier) takeChanged() []announcedChange {
	n.mu.Lock()
	defer n.mu.Unlock()
	changes := make([]announcedChange, 0, len(n.changed))
	for _, c := range n.changed {
		changes = append(changes, c)
	}
	clear(n.changed)
	return changes
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
		var channels, payloads []string
		for k := range channelKinds {
			if !p.notifier.pending[k].Swap(false) {
				continue
			}
			if k != statusChannel {
				channels, payloads = append(channels, p.channel(channelSuffix[k])), append(payloads, p.notifier.origin)
				continue
			}
			ids := statusPayloads(p.notifier.takeChanged())
			if len(ids) == 0 {
				ids = []string{""}
			}
			for _, payload := range ids {
				channels, payloads = append(channels, p.channel(channelSuffix[k])), append(payloads, payload)
			}
		}
		if len(channels) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = p.pool.Exec(ctx, `SELECT pg_notify(c, m) FROM unnest($1::TEXT[], $2::TEXT[]) AS u(c, m)`, channels, payloads)
		cancel()
	}
}
