package postgres

import "testing"

// A waiting caller may be answered by one leader after another leader passed
// it the lead (it was still queued then). It must learn that it holds a lead,
// to pass it on: a lead that lapses unnoticed counts as taken for good, and
// once every lead has lapsed no ack is ever sent again.
func TestCommitGroupKeepsALeadPassedToAnAnsweredCaller(t *testing.T) {
	for range 100 {
		g := &commitGroup{leaders: 2}
		a, b, x := newRequest(), newRequest(), newRequest()
		if !g.add(a) || len(g.take(nil)) != 1 || !g.add(b) || len(g.take(nil)) != 1 {
			t.Fatal("want a and b to lead, each with a batch of its own")
		}
		if g.add(x) {
			t.Fatal("want x to wait: two leaders are busy")
		}
		g.release() // a's batch is answered: a passes its lead to x
		if got := g.take(nil); len(got) != 1 || got[0] != x {
			t.Fatalf("b's next batch %v, want x", got)
		}
		x.done <- nil // b answers x before x took the lead
		answered, lead, _ := g.wait(x)
		if !lead {
			t.Fatalf("x (answered %v) does not lead; want it to: its lead was passed before b answered it", answered)
		}
		if !answered && len(x.done) != 1 {
			t.Fatal("x leads but its answer is gone")
		}
		g.release() // x passes the lead on: nobody waits, so it lapses
		g.release() // b is done
		if g.leading != 0 {
			t.Fatalf("%d leads held after every caller is done, want 0", g.leading)
		}
	}
}

func newRequest() *commitRequest {
	return &commitRequest{done: make(chan error, 1), lead: make(chan struct{})}
}
