// Package provider defines the storage contract of the duroxide-go runtime.
//
// A provider stores orchestration history and runs two peek-lock queues: the
// orchestrator queue, whose messages are processed one instance at a time under
// an instance lock, and the worker queue, whose activity items are locked one by
// one. The runtime drives both through [Provider]: one [Provider.Fetch] for
// turns, one [Provider.Commit] for what a turn or an activity writes, and a
// request struct for every call, whose fields carry the fast paths (each
// with an answer that declines it). Operators and tools use [Admin], which
// every store implements too. The invariants every implementation must keep
// are proven by the conformance suite in package providertest:
//
//   - one holder of an instance lock at a time; a lock expires so that a crashed
//     holder's work is retried; ack, renew and abandon with a stale or unknown
//     token fail with [ErrLockNotHeld] and change nothing;
//   - messages that arrive while an instance is locked wait for the next turn;
//     an ack deletes only the messages fetched under its token;
//   - an ack is all-or-nothing; duplicate history event IDs are rejected;
//   - timers are orchestrator messages with a future visibility time;
//   - instance rows are created by the ack of their first turn, not by enqueue.
//
// Providers store events and work items as opaque JSON: they never interpret
// orchestration semantics beyond what [ExecutionMetadata] tells them.
package provider
