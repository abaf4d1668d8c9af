module example.com/checkout

go 1.26.0

require github.com/duroxide/duroxide-go v0.0.0

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/petermattis/goid v0.0.0-20261109124353-7cfa343ad0ab // indirect
	golang.org/x/mod v0.42.0 // indirect
)

// A user's module depends on a release; this example builds against the
// repository it lives in.
replace github.com/duroxide/duroxide-go => ../..
