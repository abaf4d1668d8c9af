// Package modgraph holds a test of the library's module graph: what a user
// module that imports the runtime and both stores pulls into its own build.
// It has no code; it imports nothing of this repository.
package modgraph
