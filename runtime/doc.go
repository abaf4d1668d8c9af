// Package runtime runs durable orchestrations and activities on a provider.
//
// An orchestration is a Go function that coordinates work through its
// OrchestrationContext: it calls activities, waits on durable timers and
// external events, starts sub-orchestrations, and returns a result. The runtime
// records every decision in the instance's history. After a crash, or simply on
// the next turn, it replays the function from the start against that history:
// completed work is answered from history, in order, so the function reaches
// the same state and continues. Orchestration code must therefore be
// deterministic: use ctx.Now, ctx.NewGUID and activities instead of time.Now,
// random numbers or I/O, and ctx.Go instead of the go statement.
//
// Orchestration code runs as cooperatively scheduled coroutines: only one of an
// instance's goroutines runs at a time, and the engine switches between them
// only where they block on a Future. Activities are ordinary functions with a
// context.Context; they run at least once, and their results are recorded once.
//
// A Runtime hosts the two dispatchers (orchestration turns and activity
// executions); a Client starts, signals, inspects and manages instances.
//
// Beyond calls, timers and events:
//   - Durable values: ctx.SetValue and ctx.Value keep small JSON values per
//     instance, recorded in history and carried across continue-as-new;
//     Client.Value reads them.
//   - Routing: WithTag sends an activity to the runtimes whose
//     Options.ActivityTags take the tag; WithSession runs every activity of
//     a session on the one runtime that holds it (Options.MaxSessions).
//   - Versions: an execution runs the orchestration version it was pinned
//     to at its first turn, and a runtime fetches only instances whose
//     version it registers, so two builds share a store safely
//     (Registry.UseVersion, StartVersion, ContinueAsNewVersion).
//   - Transactions: Client.StartTx and Client.RaiseEventTx join the
//     caller's own database transaction (postgres.InTx, sqlite.InTx).
//
// docs/orchestrations.md in the repository is the guide to all of it.
//
// The package is the public face of three layers: the replay engine
// (runtime/internal/engine), which declares OrchestrationContext, Future,
// Registry and the error types that this package names with aliases (their
// methods are documented there: go doc ./runtime/internal/engine
// OrchestrationContext); the dispatchers (runtime/internal/dispatch); and
// this package's Runtime, Options and Client.
package runtime
