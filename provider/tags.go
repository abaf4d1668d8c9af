package provider

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// MaxTagLength is the longest activity tag, in bytes.
const MaxTagLength = 63

// tagPattern is what a tag may be: a label that fits in an environment
// variable, a Kubernetes field and a metric attribute without quoting.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$`)

// ValidateTag reports whether tag is a valid activity tag: 1 to
// MaxTagLength letters, digits, '_', '.' or '-', starting and ending with a
// letter or digit.
func ValidateTag(tag string) error {
	switch {
	case tag == "":
		return fmt.Errorf("activity tag is empty")
	case len(tag) > MaxTagLength:
		return fmt.Errorf("activity tag %.20q… is %d bytes; the limit is %d", tag, len(tag), MaxTagLength)
	case !tagPattern.MatchString(tag):
		return fmt.Errorf("activity tag %q: use letters, digits, '_', '.' and '-', starting and ending with a letter or digit", tag)
	}
	return nil
}

// TagFilter says which activities a worker fetch takes, by the tag their
// ActivityExecute carries (WorkItem.Tag). The zero value takes untagged
// activities only.
type TagFilter struct {
	// Any takes every activity, tagged or not; the other fields are unused.
	Any bool `json:"any,omitempty"`
	// Tags are the tags taken. Empty: untagged activities only.
	Tags []string `json:"tags,omitempty"`
	// Untagged, with Tags, takes untagged activities too.
	Untagged bool `json:"untagged,omitempty"`
}

// Matches reports whether an activity with tag ("" for none) passes f.
func (f TagFilter) Matches(tag string) bool {
	switch {
	case f.Any:
		return true
	case tag == "":
		return len(f.Tags) == 0 || f.Untagged
	}
	return slices.Contains(f.Tags, tag)
}

// TakesUntagged reports whether f takes activities without a tag.
func (f TagFilter) TakesUntagged() bool { return f.Matches("") }

// Validate reports whether every tag of f is valid.
func (f TagFilter) Validate() error {
	for _, t := range f.Tags {
		if err := ValidateTag(t); err != nil {
			return err
		}
	}
	return nil
}

// String is f as ParseTagFilter reads it.
func (f TagFilter) String() string {
	switch {
	case f.Any:
		return AnyTag
	case len(f.Tags) == 0:
		return ""
	case f.Untagged:
		return strings.Join(append([]string{UntaggedMark}, f.Tags...), ",")
	}
	return strings.Join(f.Tags, ",")
}

// Words of a tag filter's text form (ParseTagFilter).
const (
	// AnyTag takes every activity.
	AnyTag = "*"
	// UntaggedMark takes untagged activities besides the tags named.
	UntaggedMark = "-"
)

// ParseTagFilter reads a filter from its text form, as an environment
// variable or a flag carries it: comma-separated tags ("gpu,ml"), with "-"
// for untagged activities too ("-,gpu"), or "*" for every activity. ""
// is the zero filter: untagged activities only.
func ParseTagFilter(s string) (TagFilter, error) {
	var f TagFilter
	for _, word := range strings.Split(s, ",") {
		switch word = strings.TrimSpace(word); word {
		case "":
		case AnyTag:
			f.Any = true
		case UntaggedMark:
			f.Untagged = true
		default:
			if err := ValidateTag(word); err != nil {
				return TagFilter{}, err
			}
			if !slices.Contains(f.Tags, word) {
				f.Tags = append(f.Tags, word)
			}
		}
	}
	if f.Any {
		return TagFilter{Any: true}, nil
	}
	if len(f.Tags) == 0 {
		f.Untagged = false
	}
	return f, nil
}
