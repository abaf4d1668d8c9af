package runtime

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/simhook"
)

func init() {
	simhook.RunTurn = simulateTurn
	simhook.RunActivity = simulateActivity
	simhook.ActivityType = func(reg any, name string) (reflect.Type, bool) { return reg.(*Registry).activityType(name) }
	simhook.EncodePayload = encodePayload
	simhook.Status = func(info provider.InstanceInfo) any { return statusFromInfo(info) }
}

func simulateTurn(reg any, item *provider.OrchestrationItem, now time.Time, logger *slog.Logger,
	local func(provider.WorkItem) provider.WorkItem) (provider.OrchestrationAck, bool, error) {
	in, v := prepareTurn(item, now)
	if v != runIt {
		return provider.OrchestrationAck{ExecutionID: item.ExecutionID, OrchestratorItems: in.replies}, false, nil
	}
	in.stepTimeout = Options{}.withDefaults().StepTimeout
	if local != nil {
		// One at a time: the test environment is single-threaded.
		var mu sync.Mutex
		in.local = &localRunner{
			has: func(string) bool { return true },
			run: func(w provider.WorkItem, _ time.Duration) (provider.WorkItem, error) {
				mu.Lock()
				defer mu.Unlock()
				return local(w), nil
			},
		}
	}
	ack, err := runTurn(reg.(*Registry), in, logger)
	return ack, true, err
}

func simulateActivity(ctx context.Context, item provider.WorkItem, attempt int, regs ...any) provider.WorkItem {
	var fn ActivityFunc
	var err error
	for _, r := range regs {
		if fn, err = r.(*Registry).activity(item.Name); err == nil {
			break
		}
	}
	if err != nil {
		return *failure(item, errorDetails(err))
	}
	info := ActivityInfo{Instance: item.Instance, ExecutionID: item.ExecutionID, ActivityID: item.ID, Name: item.Name, Attempt: attempt}
	out, err := callActivity(context.WithValue(ctx, activityInfoKey{}, info), fn, item)
	if err != nil {
		return *failure(item, errorDetails(err))
	}
	return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID, Result: out}
}
