// Package inspect reads an instance's recorded history for people: what it
// waits on, what each timer is for, the tree of its sub-orchestrations and
// the timeline of its activities, timers and events. The CLI and the web
// view show the same answers because both ask this package.
//
// It may import provider and runtime; nothing in provider or runtime may
// import it.
package inspect
