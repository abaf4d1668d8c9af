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
	item        *provider.OrchestrationItem // set when the batch's results are read
}

func queueInstanceFetches(b *pgx.Batch, fetches []*instanceFetch) {
	instances := make([]string, len(fetches))
	lockMs := make([]int64, len(fetches))
	for i, f := range fetches {
		instances[i], lockMs[i] = f.instance, f.lockTimeout.Milliseconds()
	}
	b.Queue(fetchInstanceQuery, instances, lockMs, len(fetches))
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
		item, _, err := scanOrchestrationItem(rows)
		if err != nil {
			return err
		}
		if item == nil {
			continue
		}
		for _, f := range fetches {
			if f.instance == item.Instance {
				f.item = item
				break
			}
		}
	}
	return rows.Err()
}
