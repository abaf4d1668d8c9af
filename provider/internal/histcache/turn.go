package histcache

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

// Turn returns the turn that delivers msg to the instance's execution, built
// from the cache alone (provider.FetchRequest.Deliver): the whole history,
// the execution still running, its custom status known. nil otherwise. Its
// LockToken names the state it was built from (TurnToken).
func (c *Cache) Turn(instance string, execution int64, msg provider.WorkItem) *provider.OrchestrationItem {
	if c == nil {
		return nil
	}
	e, ok := c.lru.Get(instance)
	if !c.counted(ok && e.execution == execution && e.incarnation != 0 && e.customKnown && len(e.events) > 0) {
		return nil
	}
	first, last := e.events[0], e.events[len(e.events)-1]
	if first.Kind != provider.EventOrchestrationStarted || last.Kind.EndsExecution() {
		return nil
	}
	return &provider.OrchestrationItem{
		Instance: instance, OrchestrationName: first.Name, Version: first.Version, ExecutionID: execution,
		Status: provider.StatusRunning, Exists: true, ParentInstance: first.ParentInstance,
		History: slices.Clip(e.events), Messages: []provider.WorkItem{msg}, AttemptCount: 1, CustomStatus: e.custom,
		LockToken: TurnToken(e.incarnation, execution, last.ID, nil),
	}
}

// CachedTurn is Turn for msg, an activity's result (never queued), after
// queued, results of the execution this provider's quiet acks queued (the
// turn consumes them); or TimerTurn for msg, a timer queued as msg encodes.
func (c *Cache) CachedTurn(instance string, execution int64, msg provider.WorkItem, queued ...provider.WorkItem) *provider.OrchestrationItem {
	if msg.Kind == provider.WorkTimerFired {
		stored, err := provider.EncodeWorkItem(msg)
		if err != nil || msg.ExecutionID != execution || len(queued) > 0 {
			return nil
		}
		return c.TimerTurn(instance, stored)
	}
	turn := c.Turn(instance, execution, msg)
	if turn == nil || len(queued) == 0 {
		return turn
	}
	stored := make([]string, len(queued))
	for i, q := range queued {
		var err error
		if q.Instance != instance || q.ExecutionID != execution || !activityResult(q.Kind) {
			return nil
		}
		if stored[i], err = provider.EncodeWorkItem(q); err != nil {
			return nil
		}
	}
	incarnation, _, last, _, _ := ParseTurnToken(turn.LockToken)
	turn.LockToken = TurnToken(incarnation, execution, last, stored)
	turn.Messages = append(slices.Clone(queued), msg)
	return turn
}

// TimerTurn is Turn for timers the provider's acks queued for the instance,
// given in their stored form: the turn delivers them in that order and
// consumes their messages (Cached set). nil when the cache cannot build it
// or a form does not decode to a timer of the instance's cached execution.
func (c *Cache) TimerTurn(instance string, stored ...string) *provider.OrchestrationItem {
	if len(stored) == 0 {
		return nil
	}
	timers := make([]provider.WorkItem, len(stored))
	for i, s := range stored {
		msg, err := provider.DecodeWorkItem(s)
		if err != nil || msg.Kind != provider.WorkTimerFired || msg.Instance != instance {
			return nil
		}
		timers[i] = msg
	}
	execution := timers[0].ExecutionID
	if slices.ContainsFunc(timers, func(t provider.WorkItem) bool { return t.ExecutionID != execution }) {
		return nil
	}
	turn := c.Turn(instance, execution, timers[0])
	if turn == nil {
		return nil
	}
	incarnation, execution, last, _, _ := ParseTurnToken(turn.LockToken)
	turn.LockToken = TurnToken(incarnation, execution, last, stored)
	turn.Messages = timers
	turn.Cached = true
	return turn
}

// TurnToken names the state of an instance a cached turn was built from: the
// incarnation, execution and last event ID the store must still hold for
// the turn to commit, and the stored forms of the queued messages the turn
// consumes (timers, or quiet results; none for an activity's result alone,
// never queued).
func TurnToken(incarnation, execution, lastEvent int64, queued []string) string {
	list := ""
	if len(queued) > 0 {
		b, _ := json.Marshal(queued) // a []string always encodes
		list = string(b)
	}
	return fmt.Sprintf("cached:%d:%d:%d:%s", incarnation, execution, lastEvent, list)
}

// ParseTurnToken reads what TurnToken wrote; ok is false for any other token.
func ParseTurnToken(token string) (incarnation, execution, lastEvent int64, queued []string, ok bool) {
	parts := strings.SplitN(token, ":", 5)
	if len(parts) != 5 || parts[0] != "cached" {
		return 0, 0, 0, nil, false
	}
	var err [4]error
	incarnation, err[0] = strconv.ParseInt(parts[1], 10, 64)
	execution, err[1] = strconv.ParseInt(parts[2], 10, 64)
	lastEvent, err[2] = strconv.ParseInt(parts[3], 10, 64)
	if parts[4] != "" {
		err[3] = json.Unmarshal([]byte(parts[4]), &queued)
	}
	if err[0] != nil || err[1] != nil || err[2] != nil || err[3] != nil || incarnation == 0 {
		return 0, 0, 0, nil, false
	}
	return incarnation, execution, lastEvent, queued, true
}

// DueTurns splits timers that fell due (wake.Due.ReadyTimers, each
// instance's together): with cached, one turn per instance whose turn the
// cache builds, delivering all its timers, put in flight; the others'
// instances are returned by name, to lock.
func (c *Cache) DueTurns(timers []wake.DueTimer, cached bool, inFlight *InFlight) (turns []*provider.OrchestrationItem, byName []string) {
	for len(timers) > 0 {
		instance := timers[0].Instance
		n := 1
		for n < len(timers) && timers[n].Instance == instance {
			n++
		}
		if turn := c.dueTurn(timers[:n], cached); turn != nil {
			inFlight.Add(instance)
			turns = append(turns, turn)
		} else {
			byName = append(byName, instance)
		}
		timers = timers[n:]
	}
	return turns, byName
}

// dueTurn is the cached turn delivering one instance's due timers, or nil.
func (c *Cache) dueTurn(timers []wake.DueTimer, cached bool) *provider.OrchestrationItem {
	if !cached {
		return nil
	}
	stored := make([]string, len(timers))
	for i, t := range timers {
		stored[i] = t.Item
	}
	return c.TimerTurn(timers[0].Instance, stored...)
}

// Commit is what a cached turn's commit must find unchanged in the store,
// and the stored forms of the queued messages it consumes: a timer's turn
// its timers, an activity's turn the quiet results it delivers, if any.
type Commit struct {
	Incarnation, Execution, LastEvent int64
	Queued                            []string
}

// CheckCommit validates a TurnCached commit's arguments for either store and
// reads what the turn was built from.
func CheckCommit(op, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck, lease []int,
	activityLockTimeout time.Duration) (Commit, error) {
	var c Commit
	var ok bool
	c.Incarnation, c.Execution, c.LastEvent, c.Queued, ok = ParseTurnToken(turn.LockToken)
	if !ok {
		return c, encode.Invalid(op, turn.Instance, "the turn was not built by CachedTurn or a fetch FromCache")
	}
	timers := 0
	for _, stored := range c.Queued {
		msg, err := provider.DecodeWorkItem(stored)
		switch {
		case err != nil || msg.Instance != turn.Instance:
			return c, encode.Invalid(op, turn.Instance, "the turn's token names a message of another instance, or none")
		case msg.Kind == provider.WorkTimerFired:
			timers++
		case !activityResult(msg.Kind):
			return c, encode.Invalid(op, turn.Instance, "a cached turn consumes no queued %s", msg.Kind)
		}
	}
	switch {
	case workToken == "" && timers == 0:
		return c, encode.LockNotHeld(op, turn.Instance, "empty activity lock token")
	case workToken == "" && timers != len(c.Queued):
		return c, encode.Invalid(op, turn.Instance, "a timer's turn consumes its timers alone")
	case workToken != "" && timers > 0:
		return c, encode.Invalid(op, turn.Instance, "a timer's turn takes no activity lock token")
	}
	return c, encode.CheckLeasing(op, ack, lease, activityLockTimeout)
}

func activityResult(k provider.WorkItemKind) bool {
	return k == provider.WorkActivityCompleted || k == provider.WorkActivityFailed
}
