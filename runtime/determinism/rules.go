package determinism

import (
	"go/types"
	"strings"
)

// Fixes name the deterministic alternative to each kind of offence; every
// report ends with one.
const (
	fixGo       = "use ctx.Go, which the replay engine schedules deterministically"
	fixNow      = "use ctx.Now(), which replays the recorded time"
	fixTimer    = "use ctx.CreateTimer, a durable timer recorded in the history"
	fixRandom   = "use ctx.NewGUID() or draw the value in an activity"
	fixMapOrder = "map iteration order is random, so iterate over sorted keys (slices.Sorted(maps.Keys(m)))"
	fixChannel  = "use futures with ctx.Select / ctx.WhenAll"
	fixIO       = "do it in an activity (ctx.CallActivity)"
)

// clockFuncs read the wall clock, which differs on every replay.
var clockFuncs = set("Now", "Since", "Until")

// timerFuncs wait on the wall clock, outside the history.
var timerFuncs = set("Sleep", "After", "Tick", "NewTimer", "NewTicker", "AfterFunc")

// randomPackages yield a different value on every replay, whatever is called.
var randomPackages = set("math/rand", "math/rand/v2", "crypto/rand")

// ioPackages talk to the outside world through every function and method.
var ioPackages = set("net", "net/http", "net/rpc", "database/sql", "os/exec", "io/ioutil", "syscall")

// osIOFuncs are the functions of package os that touch files, the environment
// or the process; the rest of os (errors, constants) is harmless.
var osIOFuncs = set(
	"Open", "OpenFile", "OpenInRoot", "OpenRoot", "Create", "CreateTemp",
	"ReadFile", "WriteFile", "ReadDir", "Remove", "RemoveAll", "Rename",
	"Stat", "Lstat", "Truncate", "Chmod", "Chown", "Chtimes", "Link", "Symlink",
	"Readlink", "Getwd", "Chdir", "Getenv", "LookupEnv", "Setenv", "Unsetenv",
	"Clearenv", "Environ", "ExpandEnv", "Hostname", "Getpid", "Getppid",
	"Getuid", "Geteuid", "Getgid", "Getegid", "Executable", "TempDir",
	"UserHomeDir", "UserCacheDir", "UserConfigDir", "StartProcess", "FindProcess",
)

// mapIterFuncs return an iterator in the map's random order.
var mapIterFuncs = set("Keys", "Values", "All")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// stdlibRule reports whether fn is a standard-library function that orchestration
// code must not use, with the construct to name and the fix to suggest.
func stdlibRule(fn *types.Func) (construct, fix string, ok bool) {
	if fn.Pkg() == nil {
		return "", "", false
	}
	path, name := fn.Pkg().Path(), fn.Name()
	isFunc := fn.Signature().Recv() == nil
	switch {
	case path == "time" && isFunc && clockFuncs[name]:
		return fn.FullName(), fixNow, true
	case path == "time" && isFunc && timerFuncs[name]:
		return fn.FullName(), fixTimer, true
	case randomPackages[path]:
		return fn.FullName(), fixRandom, true
	case ioPackages[path], path == "os" && isOSIO(fn):
		return "I/O call " + fn.FullName(), fixIO, true
	}
	return "", "", false
}

// isOSIO reports whether fn, declared in package os, does I/O.
func isOSIO(fn *types.Func) bool {
	recv := fn.Signature().Recv()
	if recv == nil {
		return osIOFuncs[fn.Name()] || strings.HasPrefix(fn.Name(), "Mkdir")
	}
	t := recv.Type()
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Name() == "File"
}

// isMapIterator reports whether fn is maps.Keys, maps.Values or maps.All.
func isMapIterator(fn *types.Func) bool {
	return fn.Pkg() != nil && fn.Pkg().Path() == "maps" && mapIterFuncs[fn.Name()]
}
