// Package determinism defines an analyzer that reports nondeterministic code
// in duroxide orchestration functions.
//
// The runtime replays an orchestration from the start against its recorded
// history, so the function must take the same decisions on every replay.
// Reading the clock, drawing random numbers, doing I/O, starting goroutines,
// using channels or depending on map iteration order breaks that: the replay
// diverges from the history and the instance fails (or, worse, does something
// else). The analyzer finds such code before it runs; its conceptual model is
// Temporal's workflowcheck.
//
// # What is checked
//
// Orchestration code is:
//
//   - every function, method or func literal whose first parameter is a
//     *runtime.OrchestrationContext (orchestrations, ctx.Go closures, helpers);
//   - the function passed to runtime.RegisterOrchestration,
//     runtime.RegisterOrchestrationVersion or (*runtime.Registry).AddOrchestration
//     (a func literal, a named function or a method value, also when it is
//     wrapped, as in AddOrchestration("x", "1.0.0", adapt(fn)));
//   - every function of the same package such code calls statically, and every
//     func literal declared inside it.
//
// In that code it reports:
//
//   - go statements: use ctx.Go;
//   - time.Now, time.Since, time.Until: use ctx.Now(); time.Sleep, time.After,
//     time.Tick, time.NewTimer, time.NewTicker, time.AfterFunc: use
//     ctx.CreateTimer;
//   - anything from math/rand, math/rand/v2 and crypto/rand: use ctx.NewGUID()
//     or draw the value in an activity;
//   - range over a map, or directly over maps.Keys, maps.Values or maps.All:
//     iterate over sorted keys (slices.Sorted(maps.Keys(m)));
//   - channel sends, receives, range over a channel, select statements and
//     close: use futures with ctx.Select and ctx.WhenAll;
//   - I/O: calls into net, net/http, net/rpc, database/sql, os/exec,
//     io/ioutil and syscall, the file, environment and process functions of
//     os and the methods of *os.File: do it in an activity (ctx.CallActivity).
//     Logging through fmt.Print* and log is tolerated.
//
// Calls into other packages are checked through analysis facts: each function
// that is nondeterministic, directly or through what it calls, carries a fact
// naming its first offence, and a call to it from orchestration code is
// reported at the call site. The standard library is not descended into: only
// the rules above apply to it. The duroxide runtime package itself is trusted.
//
// # Running it
//
//	duroxide vet ./...
//
// or, with any driver of go vet:
//
//	go vet -vettool=$(command -v duroxide) ./...
//
// # Suppressing a report
//
// A line comment
//
//	//duroxide:nondeterministic-ok
//
// on the reported line, or on the line above it, silences reports on that line,
// for example where a value is only logged. A suppressed call into a helper is
// not followed, and a suppressed construct does not make its function
// nondeterministic for callers in other packages. Text after the directive is
// ignored, so it can say why.
//
// # Limits
//
// Calls through interfaces and func values are not followed: the analyzer sees
// only static calls. It checks code, not data: a map's keys collected into a
// slice and ranged over later, a clock passed in as a value, or global mutable
// state shared between instances all go unnoticed. Type-parameter maps ranged
// over in generic code are not recognised as maps.
package determinism
