// A module named without a dot: its packages must be checked, not mistaken
// for the standard library.
module myapp

go 1.26.0

require github.com/duroxide/duroxide-go v0.0.0

replace github.com/duroxide/duroxide-go => ../src/github.com/duroxide/duroxide-go
