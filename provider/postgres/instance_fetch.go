package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
)

// instanceFetch asks, after a batch's acks, for the next turn of one
// instance: the batch's are one call of dx_fetch_instance_items.
type instanceFetch struct {
	instance    string
	lockTimeout time.Duration
	// known is what the history cache held of the instance when the fetch
	// was queued; the store returns only the events after it.
	known knownHistory
	item  *provider.OrchestrationItem // set when the batch's results are read
	// incarnation is the fetched instance's, for the history cache once the
	// batch committed.
	incarnation int64
}

func (p *Provider) queueInstanceFetches(b *pgx.Batch, fetches []*instanceFetch) {
	instances := make([]string, len(fetches))
	lockMs := make([]int64, len(fetches))
	known := newKnownArgs(len(fetches))
	for i, f := range fetches {
		instances[i], lockMs[i] = f.instance, f.lockTimeout.Milliseconds()
		f.known = p.knownHistory(f.instance)
		known.set(i, f.known)
	}
	b.Queue(fetchInstanceQuery, instances, lockMs, len(fetches), known.incarnations, known.executions, known.events)
}

// readInstanceFetches hands each fetched turn to the first fetch that asked
// for its instance; the others of that instance get none.
func readInstanceFetches(br pgx.BatchResults, fetches []*instanceFetch) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for _, f := range fetches {
		f.item = nil // a batch's results may be read twice (batched, then alone)
	}
	for rows.Next() {
		item, meta, err := scanOrchestrationItem(rows)
		if err != nil {
			return err
		}
		if item == nil {
			continue
		}
		for _, f := range fetches {
			if f.instance == item.Instance {
				f.known.complete(item, meta.historyAfter)
				f.item, f.incarnation = item, meta.incarnation
				break
			}
		}
	}
	return rows.Err()
}
