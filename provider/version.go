package provider

import (
	"strings"

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
