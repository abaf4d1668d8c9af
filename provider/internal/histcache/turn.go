package histcache

import (
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
// from the cache alone (provider.CachedTurnCommitter): the whole history,
// the execution still running, its custom status known. nil otherwise. Its
// LockToken names the state it was built from (TurnToken).
func (c *Cache) Turn(instance string, execution int64, msg provider.WorkItem) *provider.OrchestrationItem {
	if c == nil {
		return nil
	}
	e, ok := c.lru.Get(instance)
	if !ok || e.execution != execution || e.incarnation == 0 || !e.customKnown || len(e.events) == 0 {
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
		LockToken: TurnToken(e.incarnation, execution, last.ID, ""),
	}
}

// CachedTurn is Turn for msg, an activity's result (never queued), or
// TimerTurn for msg, a timer queued as msg encodes.
func (c *Cache) CachedTurn(instance string, execution int64, msg provider.WorkItem) *provider.OrchestrationItem {
	if msg.Kind != provider.WorkTimerFired {
		return c.Turn(instance, execution, msg)
	}
	stored, err := provider.EncodeWorkItem(msg)
	if err != nil || msg.ExecutionID != execution {
		return nil
	}
	return c.TimerTurn(instance, stored)
}

// TimerTurn is Turn for a timer the provider's ack queued, given in its
// stored form: the turn consumes that message (Cached set). nil when the
// cache cannot build it or the form does not decode.
func (c *Cache) TimerTurn(instance, stored string) *provider.OrchestrationItem {
	if stored == "" {
		return nil
	}
	msg, err := provider.DecodeWorkItem(stored)
	if err != nil || msg.Kind != provider.WorkTimerFired || msg.Instance != instance {
		return nil
	}
	turn := c.Turn(instance, msg.ExecutionID, msg)
	if turn == nil {
		return nil
	}
	incarnation, execution, last, _, _ := ParseTurnToken(turn.LockToken)
	turn.LockToken = TurnToken(incarnation, execution, last, stored)
	turn.Cached = true
	return turn
}

// TurnToken names the state of an instance a cached turn was built from: the
// incarnation, execution and last event ID the store must still hold for
// the turn to commit, and the stored form of the queued message the turn
// consumes (empty: the message was never queued, an activity's result).
func TurnToken(incarnation, execution, lastEvent int64, queued string) string {
	return fmt.Sprintf("cached:%d:%d:%d:%s", incarnation, execution, lastEvent, queued)
}

// ParseTurnToken reads what TurnToken wrote; ok is false for any other token.
func ParseTurnToken(token string) (incarnation, execution, lastEvent int64, queued string, ok bool) {
	parts := strings.SplitN(token, ":", 5)
	if len(parts) != 5 || parts[0] != "cached" {
		return 0, 0, 0, "", false
	}
	var err [3]error
	incarnation, err[0] = strconv.ParseInt(parts[1], 10, 64)
	execution, err[1] = strconv.ParseInt(parts[2], 10, 64)
	lastEvent, err[2] = strconv.ParseInt(parts[3], 10, 64)
	if err[0] != nil || err[1] != nil || err[2] != nil || incarnation == 0 {
		return 0, 0, 0, "", false
	}
	return incarnation, execution, lastEvent, parts[4], true
}

// DueTurns splits timers that fell due: with cached, those whose turns the
// cache builds become turns, put in flight; the others' instances are
// returned by name, to lock.
func (c *Cache) DueTurns(timers []wake.DueTimer, cached bool, inFlight *InFlight) (turns []*provider.OrchestrationItem, byName []string) {
	for _, t := range timers {
		if cached {
			if turn := c.TimerTurn(t.Instance, t.Item); turn != nil {
				inFlight.Add(t.Instance)
				turns = append(turns, turn)
				continue
			}
		}
		byName = append(byName, t.Instance)
	}
	return turns, byName
}

// Commit is what a cached turn's commit must find unchanged in the store,
// and the timer message it consumes (empty: an activity's turn).
type Commit struct {
	Incarnation, Execution, LastEvent int64
	Queued                            string
}

// CheckCommit validates CommitCachedTurn's arguments for either store and
// reads what the turn was built from.
func CheckCommit(op, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck, lease []int,
	activityLockTimeout time.Duration) (Commit, error) {
	var c Commit
	var ok bool
	c.Incarnation, c.Execution, c.LastEvent, c.Queued, ok = ParseTurnToken(turn.LockToken)
	switch {
	case !ok:
		return c, encode.Invalid(op, turn.Instance, "the turn was not built by CachedTurn or FetchOrchestrationItemsCached")
	case workToken == "" && c.Queued == "":
		return c, encode.LockNotHeld(op, turn.Instance, "empty activity lock token")
	case workToken != "" && c.Queued != "":
		return c, encode.Invalid(op, turn.Instance, "a timer's turn takes no activity lock token")
	}
	return c, encode.CheckLeasing(op, ack, lease, activityLockTimeout)
}
