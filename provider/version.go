package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"golang.org/x/mod/semver"
)

// Orchestration versions are semantic versions, written with or without the
// leading "v" ("1.2.0" and "v1.2.0" are the same version).

// ValidVersion reports whether v is a semantic version.
func ValidVersion(v string) bool { return semver.IsValid(canonicalVersion(v)) }

// CompareVersions orders two versions as semver.Compare does: -1, 0 or +1.
func CompareVersions(a, b string) int {
	return semver.Compare(canonicalVersion(a), canonicalVersion(b))
}

func canonicalVersion(v string) string {
	if !strings.HasPrefix(v, "v") {
		return "v" + v
	}
	return v
}

// Capability is what a fetcher can run: the versions of each orchestration
// it registers (FetchRequest.Capability).
type Capability struct {
	Orchestrations map[string][]string

	// cached is Keys's answer: a fetcher passes the same capability to
	// every fetch.
	cached struct {
		once        sync.Once
		keys, names []string
	}
}

// KeySeparator joins an orchestration's name and version in a
// capability key (Capability.Keys).
const KeySeparator = "\x1f"

// Keys lists the (name, version) pairs c admits as name+KeySeparator+
// version, each version in every spelling a store may hold ("1.2.0",
// "v1.2.0", "1.2"), and Names the orchestrations c admits at any version
// (an instance that pinned none); both sorted. The slices are shared:
// callers must not change them, nor c's Orchestrations once called.
func (c *Capability) Keys() (keys, names []string) {
	c.cached.once.Do(func() { c.cached.keys, c.cached.names = c.expand() })
	return c.cached.keys, c.cached.names
}

func (c *Capability) expand() (keys, names []string) {
	names = slices.Sorted(maps.Keys(c.Orchestrations))
	seen := map[string]bool{}
	for _, name := range names {
		for _, v := range c.Orchestrations[name] {
			for _, s := range versionSpellings(v) {
				if k := name + KeySeparator + s; !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	slices.Sort(keys)
	return keys, names
}

// Validate reports a capability with an unnamed orchestration or an
// invalid version.
func (c *Capability) Validate() error {
	if c == nil {
		return nil
	}
	for name, versions := range c.Orchestrations {
		if name == "" {
			return fmt.Errorf("capability names an orchestration without a name")
		}
		for _, v := range versions {
			if !ValidVersion(v) {
				return fmt.Errorf("capability: orchestration %q version %q is not a semantic version", name, v)
			}
		}
	}
	return nil
}

// Admits reports whether c admits an instance of the orchestration at its
// pinned version ("" for none pinned: any registered version).
func (c *Capability) Admits(name, version string) bool {
	if c == nil {
		return true
	}
	versions, ok := c.Orchestrations[name]
	if !ok || version == "" {
		return ok
	}
	return slices.ContainsFunc(versions, func(v string) bool { return CompareVersions(v, version) == 0 })
}

// versionSpellings are the ways v may be written: with and without the
// leading "v", in full and as given.
func versionSpellings(v string) []string {
	bare := strings.TrimPrefix(v, "v")
	full := strings.TrimPrefix(semver.Canonical(canonicalVersion(v)), "v")
	return []string{v, bare, "v" + bare, full, "v" + full}
}
