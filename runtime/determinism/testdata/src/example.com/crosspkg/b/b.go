// Package b is a library called from orchestration code in package a; the
// analyzer learns about it through facts.
package b

import "time"

// Stamp reads the wall clock.
func Stamp() time.Time { // want Stamp:"nondeterministic: calls time.Now \\(b/b.go:9\\)"
	return time.Now()
}

// Indirect reads the wall clock through Stamp.
func Indirect() time.Time { // want Indirect:"nondeterministic: calls time.Now \\(b/b.go:9\\)"
	return Stamp()
}

// Pure is deterministic: no fact.
func Pure(x int) int { return x * 2 }

// Clock reads the clock through a method.
type Clock struct{}

// Read reads the wall clock.
func (*Clock) Read() time.Time { // want Read:"calls time.Now"
	return time.Now()
}

// Spawn starts a goroutine.
func Spawn(f func()) { // want Spawn:"uses a go statement \\(b/b.go:30\\)"
	go f()
}
