// Package ui is duroxide's web view: server-rendered pages over a store for
// whoever is on call.
//
//   - Instances (/instances): newest first, filtered by status (Pending and
//     Stalled included), orchestration, ID prefix and creation time, paged by
//     keyset.
//   - Instance (/instance?id=…): status, input, output, failure with its
//     kind, custom status, what it waits on, its parent and children, every
//     execution of a continue-as-new chain, and the execution's history as
//     a timeline (activities and timers as bars on a time axis, retries and
//     backoffs labelled, events as marks) and as a table.
//   - Store (/store): instance counts by status, queue depths, pending and
//     stalled instances, live workers and what they register.
//
// Reading needs no JavaScript. Actions (raise an event, cancel, terminate,
// rewind or retry a failed instance, delete a finished one) are off unless Options.Actions is set; each
// asks for confirmation on a page of its own and is refused across origins
// (http.CrossOriginProtection).
//
// Serve it on its own with `duroxide ui --store …`, or mount it:
//
//	http.Handle("/duroxide/", http.StripPrefix("/duroxide", ui.New(client, store, ui.Options{Prefix: "/duroxide"})))
//
// It may import provider, runtime and internal/inspect.
package ui
