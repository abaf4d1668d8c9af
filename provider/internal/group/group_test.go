package group

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
)

// A waiting caller may be answered by one leader after another leader passed
// it the lead (it was still queued then). It must learn that it holds a lead,
// to pass it on: a lead that lapses unnoticed counts as taken for good, and
// once every lead has lapsed no ack is ever sent again.
func TestGroupKeepsALeadPassedToAnAnsweredCaller(t *testing.T) {
	for range 100 {
		g := &Group[int]{MaxBatch: 32, MaxLeaders: 2}
		a, b, x, y := newRequest(), newRequest(), newRequest(), newRequest()
		if !g.addLead(a) || len(g.take(a, nil)) != 1 || !g.addLead(b) || len(g.take(b, nil)) != 1 {
			t.Fatal("want a and b to lead, each with a batch of its own")
		}
		if g.addLead(x) || g.addLead(y) {
			t.Fatal("want x and y to wait: two leaders are busy")
		}
		g.release() // a's batch is answered: a passes its lead to x
		g.release() // b's batch is answered: b passes its lead to y
		if got := g.take(y, nil); len(got) != 2 || got[0] != x {
			t.Fatalf("y's batch %v, want x and y", got)
		}
		x.done <- nil // y answers x before x took the lead
		answered, lead, _ := g.wait(x)
		if !lead {
			t.Fatalf("x (answered %v) does not lead; want it to: its lead was passed before y answered it", answered)
		}
		if !answered && len(x.done) != 1 {
			t.Fatal("x leads but its answer is gone")
		}
		g.release() // x passes the lead on: nobody waits, so it lapses
		g.release() // y is done
		if g.leading != 0 {
			t.Fatalf("%d leads held after every caller is done, want 0", g.leading)
		}
	}
}

// A caller that leads from the start (add) holds a lead before it takes its
// first batch. A leader finishing meanwhile must not pass its lead to that
// caller's queued request: the caller would never see it, and the lead
// would count as held for good (two such, and no ack is ever sent again).
func TestGroupPassesNoLeadToALeader(t *testing.T) {
	g := &Group[int]{MaxBatch: 32, MaxLeaders: 2}
	log := newBatchLog()
	a, b := newRequest(), newRequest()
	if !g.addLead(a) || len(g.take(a, nil)) != 1 || !g.addLead(b) {
		t.Fatal("want a and b to lead")
	}
	g.release() // a is answered while b has not taken its batch yet
	g.lead(b, log.sender(b, nil))
	log.wantAnswered(t, b)
	if g.leading != 0 || g.Len() != 0 {
		t.Fatalf("%d leads held and %d requests queued after every caller is done, want 0 and 0", g.leading, g.Len())
	}
}

// A caller woken to lead whose request another leader then took and
// answered returns at once: it leads no batch of others' requests, and its
// lead passes to the next waiting caller, who sends what is left.
func TestGroupAnsweredCallerLeadsNoMore(t *testing.T) {
	g := &Group[int]{MaxBatch: 32, MaxLeaders: 2}
	log := newBatchLog()
	a, b, x, y, z := newRequest(), newRequest(), newRequest(), newRequest(), newRequest()
	if !g.addLead(a) || len(g.take(a, nil)) != 1 || !g.addLead(b) || len(g.take(b, nil)) != 1 {
		t.Fatal("want a and b to lead, each with a batch of its own")
	}
	if g.addLead(x) || g.addLead(y) {
		t.Fatal("want x and y to wait: two leaders are busy")
	}
	g.release() // a is answered: the lead passes to x
	g.release() // b is answered: the lead passes to y
	if answered, lead, _ := g.wait(x); answered || !lead {
		t.Fatalf("x answered %v, lead %v; want the lead and no answer yet", answered, lead)
	}
	if answered, lead, _ := g.wait(y); answered || !lead {
		t.Fatalf("y answered %v, lead %v; want the lead and no answer yet", answered, lead)
	}
	// y takes x's request with its own before x does; z comes meanwhile.
	g.lead(y, log.sender(y, func() {
		if g.addLead(z) {
			t.Error("want z to wait: x and y lead")
		}
	}))
	g.lead(x, log.sender(x, nil))
	if n := log.lateBatches(x); n != 0 {
		t.Errorf("x led %d batches after y answered it, want 0", n)
	}
	if err := g.follow(z, log.sender(z, nil)); err != nil {
		t.Fatal(err)
	}
	log.wantAnswered(t, x, y, z)
	if g.leading != 0 || g.Len() != 0 {
		t.Fatalf("%d leads held and %d requests queued after every caller is done, want 0 and 0", g.leading, g.Len())
	}
}

// A caller woken to lead whose request another leader took but has not
// answered yet leads no batch either: its answer comes from that leader.
func TestGroupTakenCallerLeadsNoMore(t *testing.T) {
	g := &Group[int]{MaxBatch: 32, MaxLeaders: 2}
	log := newBatchLog()
	a, b, x, y, z := newRequest(), newRequest(), newRequest(), newRequest(), newRequest()
	if !g.addLead(a) || len(g.take(a, nil)) != 1 || !g.addLead(b) || len(g.take(b, nil)) != 1 || g.addLead(x) || g.addLead(y) {
		t.Fatal("want a and b to lead, x and y to wait")
	}
	g.release() // a is answered: the lead passes to x
	g.release() // b is answered: the lead passes to y
	g.wait(x)
	g.wait(y)
	taken := g.take(y, nil) // y's batch, at the server
	if len(taken) != 2 || g.addLead(z) {
		t.Fatalf("y took %d requests, want x's and its own; z must wait", len(taken))
	}
	g.lead(x, log.sender(x, nil))
	if n := log.sent(x); n != 0 {
		t.Errorf("x led %d batches while y sent its request, want 0", n)
	}
	log.sender(y, nil)(taken)
	g.release() // y is answered
	if err := g.follow(z, log.sender(z, nil)); err != nil {
		t.Fatal(err)
	}
	log.wantAnswered(t, x, y, z)
	if g.leading != 0 || g.Len() != 0 {
		t.Fatalf("%d leads held and %d requests queued after every caller is done, want 0 and 0", g.leading, g.Len())
	}
}

// Callers that commit over and over never lead a batch after their own
// request was answered, and every request is answered. With fewer callers
// than MaxBatch, a leader's first batch holds its own request unless
// another leader took it, so a late batch is one led past its own.
func TestGroupCallersLeadOnlyUntilAnswered(t *testing.T) {
	const callers, rounds = 16, 50
	g := &Group[int]{MaxBatch: 32, MaxLeaders: 2}
	log := newBatchLog()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range rounds {
				req := newRequest()
				if err := g.Run(req, log.sender(req, runtime.Gosched)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if late := log.totalLate(); late != 0 {
		t.Errorf("callers led %d batches after their own request was answered, want 0", late)
	}
	if g.leading != 0 || g.Len() != 0 {
		t.Fatalf("%d leads held and %d requests queued after every caller is done, want 0 and 0", g.leading, g.Len())
	}
}

// batchLog answers the batches callers lead, and counts per caller the
// batches it led and those it led after its own request was answered.
type batchLog struct {
	mu       sync.Mutex
	answered map[*Request[int]]bool
	led      map[*Request[int]]int
	late     map[*Request[int]]int
}

func newBatchLog() *batchLog {
	return &batchLog{answered: map[*Request[int]]bool{}, led: map[*Request[int]]int{}, late: map[*Request[int]]int{}}
}

// sender is own's caller's send: it answers every request of the batch,
// then calls then (if not nil).
func (l *batchLog) sender(own *Request[int], then func()) func([]*Request[int]) {
	return func(batch []*Request[int]) {
		l.mu.Lock()
		l.led[own]++
		if l.answered[own] {
			l.late[own]++
		}
		for _, req := range batch {
			l.answered[req] = true
			req.done <- nil
		}
		l.mu.Unlock()
		if then != nil {
			then()
		}
	}
}

func (l *batchLog) sent(own *Request[int]) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.led[own]
}

func (l *batchLog) lateBatches(own *Request[int]) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.late[own]
}

func (l *batchLog) totalLate() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, late := range l.late {
		n += late
	}
	return n
}

func (l *batchLog) wantAnswered(t *testing.T, reqs ...*Request[int]) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, req := range reqs {
		if !l.answered[req] && len(req.done) == 0 {
			t.Errorf("request %d never answered", i)
		}
	}
}

func newRequest() *Request[int] { return NewRequest(context.Background(), 0) }

// addLead queues req and reports whether its caller must lead.
func (g *Group[W]) addLead(req *Request[W]) bool {
	lead, _ := g.add(req)
	return lead
}

// After Stop, a request is refused, the requests queued are refused once
// the leader's batch is sent, and no lead is left held.
func TestGroupStopRefusesQueuedAndLaterRequests(t *testing.T) {
	g := &Group[int]{MaxBatch: 32, MaxLeaders: 1}
	log := newBatchLog()
	a, x, y := newRequest(), newRequest(), newRequest()
	if !g.addLead(a) || len(g.take(a, nil)) != 1 || g.addLead(x) {
		t.Fatal("want a to lead with its own batch, x to wait")
	}
	g.Stop()
	if err := g.Run(y, log.sender(y, nil)); !errors.Is(err, ErrStopped) {
		t.Fatalf("a request after Stop: %v, want ErrStopped", err)
	}
	a.Answer(nil) // a's batch was sent
	g.release()
	if err := g.follow(x, log.sender(x, nil)); !errors.Is(err, ErrStopped) {
		t.Fatalf("a request queued at Stop: %v, want ErrStopped", err)
	}
	g.WaitLeaders()
	if g.Leading() != 0 || g.Len() != 0 || log.sent(x) != 0 {
		t.Fatalf("%d leads held, %d requests queued, %d batches sent by x after Stop; want 0, 0, 0", g.Leading(), g.Len(), log.sent(x))
	}
}
