package samples

import (
	"context"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// Demo is one sample run: how to start it, what to send it, what it must return.
type Demo struct {
	Name          string
	Orchestration string
	Input         any
	// Interact, when set, runs after the start (e.g. raises an event).
	Interact func(ctx context.Context, c *runtime.Client, instance string) error
	// Want is the expected output, as JSON.
	Want string
}

// Demos lists one run of every sample.
func Demos() []Demo {
	return []Demo{
		{Name: "hello", Orchestration: "Hello", Input: "World", Want: `"Hello, World!"`},
		{Name: "function chaining", Orchestration: "Chain", Input: "durable", Want: `"ELBARUD!"`},
		{Name: "fan-out/fan-in over 100 activities", Orchestration: "FanOut", Input: 100, Want: `338350`},
		{Name: "approval (event raced against a timer)", Orchestration: "Approval",
			Input: ApprovalRequest{Item: "expense-42", Timeout: time.Minute},
			Interact: func(ctx context.Context, c *runtime.Client, id string) error {
				return c.RaiseEvent(ctx, id, "approval", Decision{Approved: true, By: "alice"})
			},
			Want: `"expense-42: approved by alice"`},
		{Name: "sub-orchestration fan-out", Orchestration: "SubFanOut", Input: []string{"Ada", "Grace", "Linus"},
			Want: `["Hello, Ada!","Hello, Grace!","Hello, Linus!"]`},
		{Name: "eternal counter (continue-as-new)", Orchestration: "Counter",
			Input: CounterState{Limit: 5, Tick: 20 * time.Millisecond}, Want: `5`},
		{Name: "saga with compensation", Orchestration: "Saga",
			Input: Trip{Steps: []string{"flight", "hotel", "car"}, FailAt: "car"},
			Want:  `{"booked":["flight","hotel"],"failed":"car","compensated":["hotel","flight"]}`},
		{Name: "retry policy (succeeds on the third attempt)", Orchestration: "Retry", Input: "payment-7",
			Want: `"charged payment-7 on attempt 3"`},
		{Name: "shopping cart in durable values", Orchestration: "Cart", Input: struct{}{},
			Interact: func(ctx context.Context, c *runtime.Client, id string) error {
				for _, ev := range []CartEvent{{Add: "apple", Price: 3}, {Add: "pear", Price: 4}, {Add: "fig", Price: 2}, {Checkout: true}} {
					if err := c.RaiseEvent(ctx, id, "cart", ev); err != nil {
						return err
					}
				}
				return nil
			},
			Want: `{"items":["apple","pear","fig"],"total":9}`},
		{Name: "activity routed by tag to a GPU worker", Orchestration: "Render", Input: "teapot",
			Want: `"frame teapot rendered by ` + DemoGPUWorker + `"`},
	}
}

// DemoGPUWorker is the WorkerID of the runtime the demo runs for the GPU
// tag (GPUTag): GPUWorkerOptions.
const DemoGPUWorker = "demo-gpu-worker"

// GPUWorkerOptions are the options of a runtime that runs only the
// activities tagged GPUTag, as the demo's second runtime on the store does.
func GPUWorkerOptions(opts runtime.Options) runtime.Options {
	opts.WorkerID, opts.ActivityTags = DemoGPUWorker, runtime.TagFilter{Tags: []string{GPUTag}}
	return opts
}

// Result is the outcome of one demo run.
type Result struct {
	Demo     Demo
	Instance string
	Status   *runtime.Status
	Elapsed  time.Duration
	Err      error
}

// OK reports whether the run completed with the expected output.
func (r Result) OK() bool {
	return r.Err == nil && r.Status != nil && r.Status.Finished() && r.Status.Output == r.Demo.Want
}

// Run starts the demo under instance and waits up to timeout for its result.
func (d Demo) Run(ctx context.Context, c *runtime.Client, instance string, timeout time.Duration) Result {
	began := time.Now()
	res := Result{Demo: d, Instance: instance}
	if res.Err = c.Start(ctx, instance, d.Orchestration, d.Input); res.Err != nil {
		return res
	}
	if d.Interact != nil {
		if res.Err = d.Interact(ctx, c, instance); res.Err != nil {
			return res
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res.Status, res.Err = c.Wait(waitCtx, instance)
	res.Elapsed = time.Since(began)
	if res.Err == nil && !res.OK() {
		res.Err = fmt.Errorf("%s: got status %s output %s failure %v, want output %s",
			d.Name, res.Status.Status, res.Status.Output, res.Status.Failure, d.Want)
	}
	return res
}
