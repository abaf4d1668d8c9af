package postgres

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"

	"github.com/duroxide/duroxide-go/provider"
)

// The status feed carries the status changes acks made in the NOTIFY
// payload, so watchers report a change as soon as it is announced, without
// reading it back. Reading changes by transaction ID alone must wait until
// every older transaction on the server has ended (the snapshot's xmin): one
// long transaction anywhere, even in another database, would hold every
// report back. The transaction-ID scan stays as the safety net for
// announcements that never came (a process killed between its commit and its
// NOTIFY). A payload may also name instances only (a change too large to
// carry, or a process of an earlier release): watchers read those.

// announcedChange is a status change as the ack that made it reported it,
// with its transaction, for Watch's test against its start snapshot.
// A change with Seq 0 names its instance only.
type announcedChange struct {
	Instance            string `json:"i"`
	ExecutionID         int64  `json:"e"`
	Status              string `json:"s"`
	CustomStatusVersion int64  `json:"v"`
	Seq                 int64  `json:"q"`
	Xid                 int64  `json:"x"`
}

func (c announcedChange) statusChange() provider.StatusChange {
	return provider.StatusChange{Instance: c.Instance, ExecutionID: c.ExecutionID, Status: provider.ExecutionStatus(c.Status),
		CustomStatusVersion: c.CustomStatusVersion, Seq: c.Seq}
}

// noteChange records c in changes unless a later change of its instance is
// there already.
func noteChange(changes map[string]announcedChange, c announcedChange) {
	if old, ok := changes[c.Instance]; !ok || old.Seq < c.Seq {
		changes[c.Instance] = c
	}
}

// statusFeed fans announced instance IDs out to this provider's watchers.
type statusFeed struct {
	mu   sync.Mutex
	subs map[*statusSub]struct{}
}

// statusSub is one watcher's announcements not taken yet: changes, and
// instances named only.
type statusSub struct {
	mu      sync.Mutex
	ids     map[string]struct{}
	changes map[string]announcedChange
}

func (f *statusFeed) subscribe() *statusSub {
	s := &statusSub{ids: map[string]struct{}{}, changes: map[string]announcedChange{}}
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

func (f *statusFeed) publish(ids []string, changes []announcedChange) {
	if len(ids) == 0 && len(changes) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.mu.Lock()
		for _, id := range ids {
			s.ids[id] = struct{}{}
		}
		for _, c := range changes {
			noteChange(s.changes, c)
		}
		s.mu.Unlock()
	}
}

// take returns and forgets the announcements: the instances named only,
// and the changes in the order they were made.
func (s *statusSub) take() ([]string, []announcedChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.ids {
		ids = append(ids, id)
	}
	clear(s.ids)
	var changes []announcedChange
	for _, c := range s.changes {
		changes = append(changes, c)
	}
	clear(s.changes)
	slices.SortFunc(changes, func(a, b announcedChange) int { return cmp.Compare(a.Seq, b.Seq) })
	return ids, changes
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

// statusPayloads packs changes into JSON arrays of at most maxPayload bytes
// each.
func statusPayloads(changes []announcedChange) []string {
	var out []string
	var batch []json.RawMessage
	size := 2
	flush := func() {
		if len(batch) > 0 {
			b, _ := json.Marshal(batch)
			out = append(out, string(b))
			batch, size = nil, 2
		}
	}
	for _, c := range changes {
		b, _ := json.Marshal(c)
		if c.Seq == 0 {
			b, _ = json.Marshal(c.Instance)
		}
		if size+len(b)+1 > maxPayload {
			flush()
		}
		if len(b)+2 > maxPayload {
			continue // longer than a payload can carry: the scan reports it
		}
		batch = append(batch, b)
		size += len(b) + 1
	}
	flush()
	return out
}

// parseStatusPayload reads a payload: the changes it carries and the
// instances it names only. An empty or foreign one carries neither.
func parseStatusPayload(payload string) (ids []string, changes []announcedChange) {
	var entries []json.RawMessage
	if payload == "" || json.Unmarshal([]byte(payload), &entries) != nil {
		return nil, nil
	}
	for _, e := range entries {
		var id string
		var c announcedChange
		switch {
		case json.Unmarshal(e, &id) == nil:
			ids = append(ids, id)
		case json.Unmarshal(e, &c) == nil && c.Instance != "" && c.Seq > 0:
			changes = append(changes, c)
		}
	}
	return ids, changes
}
