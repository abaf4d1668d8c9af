package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// knownHistory is what the history cache held of an instance when a fetch
// asked for its turn: the store then returns only the events after it, when
// the instance is still that incarnation in that execution.
type knownHistory struct {
	events                 []provider.Event
	incarnation, execution int64
}

func (p *Provider) knownHistory(instance string) knownHistory {
	events, incarnation, execution, ok := p.eng.Hist.Latest(instance)
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

// committed tells the store engine what work committed: the events its ack
// wrote and the timers it queued (other processes' fetchers learn that
// timers were queued), then the turns its fetches took (read after the
// ack, in the same transaction). An ack of event 1 of execution 1 created
// the instance, as its incarnation.
func (p *Provider) committed(work commitWork) {
	if a := work.ack; a != nil {
		enc := a.enc
		created := enc.ExecutionID == 1 && len(enc.Events) > 0 && enc.Events[0].ID == 1
		if p.eng.Acked(a.res.instance, created, a.incarnation, enc, time.Now().UnixMilli()) {
			p.announceRemote(orchestratorChannel)
		}
	}
	if f := work.fetch; f != nil && f.item != nil {
		p.eng.Fetched(f.item, f.incarnation)
	}
	for _, f := range work.dueTimers {
		if f.item != nil {
			p.eng.Fetched(f.item, f.incarnation)
		}
	}
}
