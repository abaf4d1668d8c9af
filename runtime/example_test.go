package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/runtimetest"
)

// Register code, run it on an embedded SQLite store, start an instance and
// wait for its result.
func Example() {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Greet", func(_ context.Context, name string) (string, error) {
		return "Hello, " + name + "!", nil
	})
	runtime.RegisterOrchestration(reg, "Hello", func(ctx *runtime.OrchestrationContext, name string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Greet", name))
	})

	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "duroxide-example")
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "store.db"), sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	rt := runtime.New(store, reg, runtime.Options{})
	if err := rt.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Shutdown(ctx)

	client := runtime.NewClient(store)
	if err := client.Start(ctx, "hello-1", "Hello", "Ada"); err != nil {
		fmt.Println(err)
		return
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := client.Wait(waitCtx, "hello-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	var greeting string
	_ = st.DecodeOutput(&greeting)
	fmt.Println(st.Status, greeting)
	// Output: Completed Hello, Ada!
}

// Check a changed build against a history the old one recorded, before
// deploying it. Here the history comes from the test kit; in production it
// comes from the store (Client.History) or `duroxide history -o json`. The
// replay needs the instance ID too: the code may derive decisions from it.
func ExampleReplay() {
	build := func(steps ...string) *runtime.Registry {
		reg := runtime.NewRegistry()
		for _, s := range []string{"Pack", "Label", "Ship"} {
			runtime.RegisterActivity(reg, s, func(context.Context, string) (string, error) { return s, nil })
		}
		runtime.RegisterOrchestration(reg, "Fulfil", func(ctx *runtime.OrchestrationContext, order string) (string, error) {
			for _, s := range steps {
				if _, err := runtime.Await[string](ctx.CallActivity(s, order)); err != nil {
					return "", err
				}
			}
			return "done", nil
		})
		return reg
	}
	env := runtimetest.New(nil, build("Pack", "Ship"))
	inst := env.Start("Fulfil", "order-1")
	_ = inst.Run()
	recorded := inst.History()

	instance := runtime.ReplayInstance(inst.ID())

	fmt.Println("same code:", runtime.Replay(build("Pack", "Ship"), recorded, instance))
	fmt.Println("new step: ", runtime.Replay(build("Pack", "Label", "Ship"), recorded, instance))
	// Output:
	// same code: <nil>
	// new step:  nondeterministic orchestration: instance "test-1" execution 1, history event 4: expected ActivityScheduled "Ship", got ActivityScheduled "Label"
}
