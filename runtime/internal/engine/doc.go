// Package engine is the replay engine: it runs one turn of one execution
// from its history and new messages and returns what the turn commits.
//
//   - turn.go: the turn, split into the code as replay drives it
//     (replayState), what reaches the code (turnInbox) and what the turn
//     commits (ackBuilder);
//   - coroutine.go, future.go, scope.go: orchestration code as cooperatively
//     scheduled coroutines that switch only where they block on a Future;
//   - context.go, registry.go, retry.go, local_activity.go: the
//     orchestration API, which package runtime names with aliases;
//   - prepare.go, fail.go, quiet.go: what a dispatcher asks of a fetched
//     item: which execution it is for, the ack that fails it, which results
//     would leave its code blocked.
//
// It does no I/O: no store, no clock but the turn's, no goroutine that
// outlives a turn. It may import provider (the types only) and the standard
// library; never runtime, runtime/internal/dispatch or a store. Functions
// that package runtime must not show its users (PrepareTurn, RunTurn,
// LookupActivity) are package functions, not methods of the aliased types.
package engine
