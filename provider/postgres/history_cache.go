package postgres

import (
	"errors"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// knownHistory is what the history cache held of an instance when a fetch
// asked for its turn: the store then returns only the events after it, when
// the instance is still that incarnation in that execution.
type knownHistory struct {
	events                 []provider.Event
	incarnation, execution int64
}

func (p *Provider) knownHistory(instance string) knownHistory {
	events, incarnation, execution, ok := p.hist.Latest(instance)
	if !ok {
		return knownHistory{}
	}
	return knownHistory{events: events, incarnation: incarnation, execution: execution}
}

// knownArgs are the fetch function's p_known_* arrays; zeros ask for whole
// histories.
type knownArgs struct {
	incarnations, executions, events []int64
}

func newKnownArgs(n int) knownArgs {
	return knownArgs{make([]int64, n), make([]int64, n), make([]int64, n)}
}

func (a knownArgs) set(i int, k knownHistory) {
	if len(k.events) > 0 {
		a.incarnations[i], a.executions[i], a.events[i] = k.incarnation, k.execution, k.events[len(k.events)-1].ID
	}
}

// errCacheMismatch: the store returned history after an event the fetch did
// not send; never expected, but a partial history must not reach a turn.
var errCacheMismatch = errors.New("the store returned a history tail after an event this process did not cache")

// complete puts the known events before the fetched ones when the store
// returned only those after event after (0: the history is whole).
func (k knownHistory) complete(item *provider.OrchestrationItem, after int64) {
	if after == 0 {
		return
	}
	if len(k.events) == 0 || k.events[len(k.events)-1].ID != after || k.execution != item.ExecutionID {
		item.DecodeError = errors.Join(item.DecodeError, &provider.CorruptDataError{Instance: item.Instance,
			What: fmt.Sprintf("history of execution %d after event %d", item.ExecutionID, after), Err: errCacheMismatch})
		return
	}
	item.History = append(k.events, item.History...)
}

// cacheFetched keeps a fetched turn's history for the instance's next turn.
// Called only with what committed data showed: a fetch of its own, or a
// commit batch once it committed.
func (p *Provider) cacheFetched(item *provider.OrchestrationItem, incarnation int64) {
	for _, timer := range encode.QueuedTimers(item) {
		p.timersDue.Taken(item.Instance, timer) // no turn is built for it from the cache
	}
	if p.hist == nil || !item.Exists || item.DecodeError != nil {
		if p.hist != nil {
			p.hist.Forget(item.Instance)
		}
		return
	}
	p.hist.Store(item.Instance, incarnation, item.ExecutionID, item.History, "")
	if len(item.History) > 0 {
		p.hist.NoteCustomStatus(item.Instance, item.ExecutionID, item.History[len(item.History)-1].ID, item.CustomStatus)
	}
}

// cacheCommitted updates the history cache after work committed: the events
// its ack wrote, then the turn its fetch took (read after the ack, in the
// same transaction).
func (p *Provider) cacheCommitted(work commitWork) {
	if p.hist == nil {
		return
	}
	if a := work.ack; a != nil {
		p.cacheAcked(a)
	}
	if f := work.fetch; f != nil && f.item != nil {
		p.cacheFetched(f.item, f.incarnation)
	}
	for _, f := range work.dueTimers {
		if f.item != nil {
			p.cacheFetched(f.item, f.incarnation)
		}
	}
}

// cacheAcked adds the events a committed ack wrote. An ack of event 1 of
// execution 1 created the instance, as its incarnation.
func (p *Provider) cacheAcked(a *turnAck) {
	enc := a.enc
	created := enc.ExecutionID == 1 && len(enc.Events) > 0 && enc.Events[0].ID == 1
	p.hist.Acked(a.res.instance, created, a.incarnation, enc)
}
