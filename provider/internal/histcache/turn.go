package histcache

import (
	"fmt"
	"slices"

	"github.com/duroxide/duroxide-go/provider"
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
	if first.Kind != provider.EventOrchestrationStarted || ends(last.Kind) {
		return nil
	}
	return &provider.OrchestrationItem{
		Instance: instance, OrchestrationName: first.Name, Version: first.Version, ExecutionID: execution,
		Status: provider.StatusRunning, Exists: true, ParentInstance: first.ParentInstance,
		History: slices.Clip(e.events), Messages: []provider.WorkItem{msg}, AttemptCount: 1, CustomStatus: e.custom,
		LockToken: TurnToken(e.incarnation, execution, last.ID),
	}
}

func ends(k provider.EventKind) bool {
	switch k {
	case provider.EventOrchestrationCompleted, provider.EventOrchestrationFailed,
		provider.EventOrchestrationTerminated, provider.EventOrchestrationContinuedAsNew:
		return true
	}
	return false
}

// TurnToken names the state of an instance a cached turn was built from: the
// incarnation, execution and last event ID the store must still hold for
// the turn to commit.
func TurnToken(incarnation, execution, lastEvent int64) string {
	return fmt.Sprintf("cached:%d:%d:%d", incarnation, execution, lastEvent)
}

// ParseTurnToken reads what TurnToken wrote; ok is false for any other token.
func ParseTurnToken(token string) (incarnation, execution, lastEvent int64, ok bool) {
	n, err := fmt.Sscanf(token, "cached:%d:%d:%d", &incarnation, &execution, &lastEvent)
	return incarnation, execution, lastEvent, err == nil && n == 3 && incarnation != 0
}
