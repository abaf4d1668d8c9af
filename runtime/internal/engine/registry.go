package engine

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/duroxide/duroxide-go/provider"
)

// OrchestrationFunc is the untyped form of an orchestration: JSON in, JSON out.
// Most code registers typed functions with RegisterOrchestration.
type OrchestrationFunc func(ctx *OrchestrationContext, input string) (output string, err error)

// ActivityFunc is the untyped form of an activity: JSON in, JSON out.
type ActivityFunc func(ctx context.Context, input string) (output string, err error)

// Registry maps orchestration names (with versions) and activity names to code.
// Register everything before the runtime starts; lookups are safe concurrently.
type Registry struct {
	mu             sync.RWMutex
	orchestrations map[string][]versionedOrchestration // ascending by version
	activities     map[string]registeredActivity
	// useVersion is each orchestration's version policy (UseVersion): the
	// version that runs when none is asked for; absent, the latest.
	useVersion map[string]string
}

// registeredActivity keeps the typed function's type beside its untyped form,
// so a test double can be checked against it. typ is nil for AddActivity.
type registeredActivity struct {
	fn  ActivityFunc
	typ reflect.Type
}

type versionedOrchestration struct {
	version string
	fn      OrchestrationFunc
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{orchestrations: map[string][]versionedOrchestration{}, activities: map[string]registeredActivity{}}
}

// DefaultVersion is the version of orchestrations registered without one.
const DefaultVersion = "1.0.0"

// AddOrchestration registers fn as version of the named orchestration. Versions
// are semantic versions ("1.2.0" or "v1.2.0"); new instances get the highest.
func (r *Registry) AddOrchestration(name, version string, fn OrchestrationFunc) error {
	if name == "" || fn == nil {
		return fmt.Errorf("register orchestration: name and function are required")
	}
	if version == "" {
		version = DefaultVersion
	}
	if !provider.ValidVersion(version) {
		return fmt.Errorf("register orchestration %q: version %q is not a semantic version", name, version)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.orchestrations[name] {
		if provider.CompareVersions(v.version, version) == 0 {
			return fmt.Errorf("register orchestration %q: version %s already registered", name, version)
		}
	}
	list := append(r.orchestrations[name], versionedOrchestration{version: version, fn: fn})
	sort.Slice(list, func(i, j int) bool {
		return provider.CompareVersions(list[i].version, list[j].version) < 0
	})
	r.orchestrations[name] = list
	return nil
}

// AddActivity registers fn under name.
func (r *Registry) AddActivity(name string, fn ActivityFunc) error {
	return r.addActivity(name, fn, nil)
}

// addActivity registers fn under name; typ is the typed function's type, or
// nil for an untyped one.
func (r *Registry) addActivity(name string, fn ActivityFunc, typ reflect.Type) error {
	if name == "" || fn == nil {
		return fmt.Errorf("register activity: name and function are required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.activities[name]; ok {
		return fmt.Errorf("register activity %q: already registered", name)
	}
	r.activities[name] = registeredActivity{fn: fn, typ: typ}
	return nil
}

// orchestration finds the code for name at version, or at the highest version
// when version is empty. It returns the version it resolved.
func (r *Registry) orchestration(name, version string) (OrchestrationFunc, string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	list := r.orchestrations[name]
	if len(list) == 0 {
		return nil, "", configErrorf("orchestration %q is not registered", name)
	}
	if version == "" {
		version = r.useVersion[name]
	}
	if version == "" {
		latest := list[len(list)-1]
		return latest.fn, latest.version, nil
	}
	for _, v := range list {
		if provider.CompareVersions(v.version, version) == 0 {
			return v.fn, v.version, nil
		}
	}
	return nil, "", configErrorf("orchestration %q version %s is not registered", name, version)
}

func (r *Registry) activity(name string) (ActivityFunc, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.activities[name]
	if !ok {
		return nil, configErrorf("activity %q is not registered", name)
	}
	return a.fn, nil
}

// activityType reports whether name is registered and, when it was registered
// typed, its function's type (func(context.Context, In) (Out, error)).
func (r *Registry) activityType(name string) (reflect.Type, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.activities[name]
	return a.typ, ok
}

// LookupOrchestration returns the code registered for the orchestration name
// at version (the highest when version is empty) and the version it
// resolved; an unregistered one is a configuration error.
func LookupOrchestration(r *Registry, name, version string) (OrchestrationFunc, string, error) {
	return r.orchestration(name, version)
}

// LookupActivity returns the code registered for the activity name; an
// unregistered name is a configuration error.
func LookupActivity(r *Registry, name string) (ActivityFunc, error) { return r.activity(name) }

// ActivityType reports whether r has the activity name and, when it was
// registered typed, its function's type (nil when added untyped).
func ActivityType(r *Registry, name string) (typ reflect.Type, registered bool) {
	return r.activityType(name)
}

// Orchestrations lists registered orchestration names with their versions.
func (r *Registry) Orchestrations() map[string][]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := map[string][]string{}
	for name, list := range r.orchestrations {
		for _, v := range list {
			out[name] = append(out[name], v.version)
		}
	}
	return out
}

// UseVersion sets the version policy of orchestration name: the version
// that runs when none is asked for (Client.Start without StartVersion, a
// sub-orchestration without WithVersion, ContinueAsNew), instead of the
// latest registered. Register a new version, keep new instances on the old
// one with UseVersion, and move them once every worker has the new code.
// "" restores the latest. The version must be registered.
func (r *Registry) UseVersion(name, version string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.orchestrations[name]
	if len(list) == 0 {
		return fmt.Errorf("use version of orchestration %q: it is not registered", name)
	}
	if version == "" {
		delete(r.useVersion, name)
		return nil
	}
	for _, v := range list {
		if provider.CompareVersions(v.version, version) == 0 {
			if r.useVersion == nil {
				r.useVersion = map[string]string{}
			}
			r.useVersion[name] = v.version
			return nil
		}
	}
	return fmt.Errorf("use version %s of orchestration %q: that version is not registered", version, name)
}

// Activities lists registered activity names, sorted.
func (r *Registry) Activities() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.activities))
	for name := range r.activities {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// RegisterOrchestration registers a typed orchestration at DefaultVersion.
// It panics on a duplicate or invalid registration: those are programming
// errors found at startup, as with http.ServeMux.
func RegisterOrchestration[In, Out any](r *Registry, name string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
	RegisterOrchestrationVersion(r, name, DefaultVersion, fn)
}

// RegisterOrchestrationVersion registers a typed orchestration at version.
func RegisterOrchestrationVersion[In, Out any](r *Registry, name, version string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
	err := r.AddOrchestration(name, version, func(ctx *OrchestrationContext, raw string) (string, error) {
		var in In
		if err := DecodePayload(raw, &in); err != nil {
			return "", fmt.Errorf("orchestration %q input: %w", name, err)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return "", err
		}
		return EncodePayload(out)
	})
	if err != nil {
		panic(err)
	}
}

// RegisterActivity registers a typed activity. It panics on a duplicate name.
func RegisterActivity[In, Out any](r *Registry, name string, fn func(ctx context.Context, input In) (Out, error)) {
	typ := reflect.TypeFor[func(context.Context, In) (Out, error)]()
	err := r.addActivity(name, func(ctx context.Context, raw string) (string, error) {
		var in In
		if err := DecodePayload(raw, &in); err != nil {
			return "", fmt.Errorf("activity %q input: %w", name, err)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return "", err
		}
		return EncodePayload(out)
	}, typ)
	if err != nil {
		panic(err)
	}
}
