package postgres

import (
	"encoding/json"
	"sync"
)

// The status feed carries the IDs of instances whose status changed in the
// NOTIFY payload, so watchers report a change as soon as it is announced.
// Reading changes by transaction ID alone must wait until every older
// transaction on the server has ended (the snapshot's xmin): one long
// transaction anywhere, even in another database, would hold every report
// back. The transaction-ID scan stays as the safety net for announcements
// that never came (a process killed between its commit and its NOTIFY).

// statusFeed fans announced instance IDs out to this provider's watchers.
type statusFeed struct {
	mu   sync.Mutex
	subs map[*statusSub]struct{}
}

// statusSub is one watcher's set of announced instances not read yet.
type statusSub struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func (f *statusFeed) subscribe() *statusSub {
	s := &statusSub{ids: map[string]struct{}{}}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs = map[*statusSub]struct{}{}
	}
	f.subs[s] = struct{}{}
	return s
}

func (f *statusFeed) unsubscribe(s *statusSub) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, s)
}

func (f *statusFeed) publish(ids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.mu.Lock()
		for _, id := range ids {
			s.ids[id] = struct{}{}
		}
		s.mu.Unlock()
	}
}

// take returns and forgets the announced instances.
func (s *statusSub) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return nil
	}
	ids := make([]string, 0, len(s.ids))
	for id := range s.ids {
		ids = append(ids, id)
	}
	clear(s.ids)
	return ids
}

// putBack returns IDs whose read failed, to be read again.
func (s *statusSub) putBack(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.ids[id] = struct{}{}
	}
}

// maxPayload keeps each NOTIFY payload under PostgreSQL's 8000-byte limit.
const maxPayload = 7000

// statusPayloads packs instance IDs into JSON arrays of at most maxPayload
// bytes each.
func statusPayloads(ids []string) []string {
	var out []string
	var batch []string
	size := 2
	flush := func() {
		if len(batch) > 0 {
			b, _ := json.Marshal(batch)
			out = append(out, string(b))
			batch, size = nil, 2
		}
	}
	for _, id := range ids {
		b, _ := json.Marshal(id)
		if size+len(b)+1 > maxPayload {
			flush()
		}
		if len(b)+2 > maxPayload {
			continue // longer than a payload can carry: the scan reports it
		}
		batch = append(batch, id)
		size += len(b) + 1
	}
	flush()
	return out
}

// parseStatusPayload reads a payload; an empty or foreign one carries no IDs.
func parseStatusPayload(payload string) []string {
	var ids []string
	if payload == "" || json.Unmarshal([]byte(payload), &ids) != nil {
		return nil
	}
	return ids
}
