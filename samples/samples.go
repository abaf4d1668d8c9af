// Package samples holds the demo orchestrations: each shows one pattern of
// durable execution. Register adds them all to a registry; cmd/demo runs them
// embedded on SQLite.
package samples

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// Register adds every sample orchestration and activity to reg.
func Register(reg *runtime.Registry) {
	runtime.RegisterActivity(reg, "Greet", greet)
	runtime.RegisterActivity(reg, "Reverse", func(_ context.Context, s string) (string, error) { return reverse(s), nil })
	runtime.RegisterActivity(reg, "Upper", func(_ context.Context, s string) (string, error) { return strings.ToUpper(s), nil })
	runtime.RegisterActivity(reg, "Exclaim", func(_ context.Context, s string) (string, error) { return s + "!", nil })
	runtime.RegisterActivity(reg, "Square", func(_ context.Context, n int) (int, error) { return n * n, nil })
	runtime.RegisterActivity(reg, "Book", book)
	runtime.RegisterActivity(reg, "Cancel", cancelBooking)
	runtime.RegisterActivity(reg, "FlakyCharge", flaky.charge)
	runtime.RegisterActivity(reg, "RenderFrame", renderFrame)

	runtime.RegisterOrchestration(reg, "Hello", Hello)
	runtime.RegisterOrchestration(reg, "Chain", Chain)
	runtime.RegisterOrchestration(reg, "FanOut", FanOut)
	runtime.RegisterOrchestration(reg, "Approval", Approval)
	runtime.RegisterOrchestration(reg, "SubFanOut", SubFanOut)
	runtime.RegisterOrchestration(reg, "Counter", Counter)
	runtime.RegisterOrchestration(reg, "Saga", Saga)
	runtime.RegisterOrchestration(reg, "Retry", Retry)
	runtime.RegisterOrchestration(reg, "Render", Render)
	runtime.RegisterOrchestration(reg, "Cart", Cart)
}

func greet(_ context.Context, name string) (string, error) {
	if name == "" {
		return "", errors.New("nobody to greet")
	}
	return "Hello, " + name + "!", nil
}

// Hello calls one activity and returns its result.
func Hello(ctx *runtime.OrchestrationContext, name string) (string, error) {
	return runtime.Await[string](ctx.CallActivity("Greet", name))
}

// Chain runs activities one after another, each on the previous one's output.
func Chain(ctx *runtime.OrchestrationContext, text string) (string, error) {
	for _, step := range []string{"Reverse", "Upper", "Exclaim"} {
		var err error
		if text, err = runtime.Await[string](ctx.CallActivity(step, text)); err != nil {
			return "", err
		}
	}
	return text, nil
}

// FanOut squares 1..n in parallel activities and sums the results.
func FanOut(ctx *runtime.OrchestrationContext, n int) (int, error) {
	futures := make([]*runtime.Future, n)
	for i := range n {
		futures[i] = ctx.CallActivity("Square", i+1)
	}
	if err := ctx.WhenAll(futures...); err != nil {
		return 0, err
	}
	sum := 0
	for _, f := range futures {
		v, err := runtime.Await[int](f)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// ApprovalRequest asks for a decision within Timeout.
type ApprovalRequest struct {
	Item    string        `json:"item"`
	Timeout time.Duration `json:"timeout"`
}

// Decision is what an approver sends as the "approval" event.
type Decision struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
}

// Approval waits for an "approval" event, raced against a durable timer.
func Approval(ctx *runtime.OrchestrationContext, req ApprovalRequest) (string, error) {
	ctx.SetCustomStatus(map[string]string{"waitingFor": "approval", "item": req.Item})
	event := ctx.WaitForEvent("approval")
	timeout := ctx.CreateTimer(req.Timeout)
	if ctx.Select(event, timeout) == 1 {
		ctx.SetCustomStatus(map[string]string{"item": req.Item, "result": "expired"})
		return fmt.Sprintf("%s: no decision within %v", req.Item, req.Timeout), nil
	}
	d, err := runtime.Await[Decision](event)
	if err != nil {
		return "", err
	}
	verdict := "rejected"
	if d.Approved {
		verdict = "approved"
	}
	ctx.SetCustomStatus(map[string]string{"item": req.Item, "result": verdict})
	return fmt.Sprintf("%s: %s by %s", req.Item, verdict, d.By), nil
}

// SubFanOut greets each name in a Hello sub-orchestration of its own.
func SubFanOut(ctx *runtime.OrchestrationContext, names []string) ([]string, error) {
	children := make([]*runtime.Future, len(names))
	for i, name := range names {
		children[i] = ctx.CallSubOrchestration("Hello", name)
	}
	out := make([]string, len(names))
	for i, child := range children {
		var err error
		if out[i], err = runtime.Await[string](child); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CounterState is the eternal counter's state, carried across executions.
type CounterState struct {
	Count int           `json:"count"`
	Limit int           `json:"limit"`
	Tick  time.Duration `json:"tick"`
}

// Counter counts to Limit, one durable tick per execution, starting each count
// as a new execution (continue-as-new) so its history stays one tick long.
// With Limit 0 it counts forever.
func Counter(ctx *runtime.OrchestrationContext, s CounterState) (int, error) {
	ctx.SetCustomStatus(map[string]int{"count": s.Count})
	if s.Limit > 0 && s.Count >= s.Limit {
		return s.Count, nil
	}
	if err := ctx.CreateTimer(s.Tick).Await(nil); err != nil {
		return 0, err
	}
	s.Count++
	return 0, ctx.ContinueAsNew(s)
}

// Trip is a saga's input: bookings to make in order; FailAt names the one
// whose provider refuses.
type Trip struct {
	Steps  []string `json:"steps"`
	FailAt string   `json:"failAt"`
}

// SagaResult reports what the saga did.
type SagaResult struct {
	Booked      []string `json:"booked"`
	Failed      string   `json:"failed,omitempty"`
	Compensated []string `json:"compensated,omitempty"`
}

// Saga books each step; when one fails, it cancels the earlier bookings in
// reverse order.
func Saga(ctx *runtime.OrchestrationContext, trip Trip) (SagaResult, error) {
	var res SagaResult
	for _, step := range trip.Steps {
		_, err := runtime.Await[string](ctx.CallActivity("Book", Booking{Step: step, Refuse: step == trip.FailAt}))
		if err == nil {
			res.Booked = append(res.Booked, step)
			continue
		}
		res.Failed = step
		for i := len(res.Booked) - 1; i >= 0; i-- {
			if _, err := runtime.Await[string](ctx.CallActivity("Cancel", res.Booked[i])); err != nil {
				return res, fmt.Errorf("compensating %s: %w", res.Booked[i], err)
			}
			res.Compensated = append(res.Compensated, res.Booked[i])
		}
		return res, nil
	}
	return res, nil
}

// Booking is one saga step.
type Booking struct {
	Step   string `json:"step"`
	Refuse bool   `json:"refuse"`
}

func book(_ context.Context, b Booking) (string, error) {
	if b.Refuse {
		return "", fmt.Errorf("%s: no availability", b.Step)
	}
	return "booked " + b.Step, nil
}

func cancelBooking(_ context.Context, step string) (string, error) { return "cancelled " + step, nil }

// Retry charges a payment through a service that fails twice before it
// succeeds; the retry policy absorbs the failures.
func Retry(ctx *runtime.OrchestrationContext, paymentID string) (string, error) {
	policy := runtime.RetryPolicy{MaxAttempts: 5, Backoff: runtime.BackoffExponential, InitialInterval: 50 * time.Millisecond}
	return runtime.Await[string](ctx.CallActivity("FlakyCharge", paymentID, runtime.WithRetry(policy)))
}

// GPUTag is the tag of the Render sample's activity: only workers taking it
// (runtime.Options.ActivityTags, a WorkerPool's spec.activityTags) run it.
const GPUTag = "gpu"

// Render renders a frame on a GPU worker: the activity is tagged, so the
// workers that do not take the tag leave it to those that do, and it waits
// (up to an hour) while none runs. The result names the worker that
// rendered it.
func Render(ctx *runtime.OrchestrationContext, frame string) (string, error) {
	policy := runtime.RetryPolicy{MaxAttempts: 1, Timeout: time.Hour}
	return runtime.Await[string](ctx.CallActivity("RenderFrame", frame, runtime.WithTag(GPUTag), runtime.WithRetry(policy)))
}

func renderFrame(ctx context.Context, frame string) (string, error) {
	info, _ := runtime.ActivityInfoFrom(ctx)
	return fmt.Sprintf("frame %s rendered by %s", frame, info.Worker), nil
}

// flakyService fails the first two calls of each orchestration instance. It
// keeps its count in memory: a stand-in for an unreliable remote service.
type flakyService struct {
	mu    sync.Mutex
	calls map[string]int
}

var flaky = &flakyService{calls: map[string]int{}}

func (f *flakyService) charge(ctx context.Context, paymentID string) (string, error) {
	info, _ := runtime.ActivityInfoFrom(ctx)
	f.mu.Lock()
	f.calls[info.Instance]++
	n := f.calls[info.Instance]
	f.mu.Unlock()
	if n < 3 {
		return "", fmt.Errorf("payment service unavailable (call %d)", n)
	}
	return fmt.Sprintf("charged %s on attempt %d", paymentID, n), nil
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
