package provider

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Validate reports what makes r unusable, as ErrInvalidArgument: an unknown
// status, a limit out of range, a cursor ListInstances did not make, or a
// time range that ends before it starts.
func (r ListRequest) Validate() error {
	switch {
	case r.Status != "" && !r.Status.Valid() && r.Status != StatusPending && r.Status != StatusStalled:
		return invalidList("unknown status %q", r.Status)
	case r.Limit < 0 || r.Limit > MaxListLimit:
		return invalidList("limit %d is not between 1 and %d (0: %d)", r.Limit, MaxListLimit, DefaultListLimit)
	case !r.CreatedAfter.IsZero() && !r.CreatedBefore.IsZero() && !r.CreatedBefore.After(r.CreatedAfter):
		return invalidList("created-before %s is not after created-after %s", r.CreatedBefore.Format(time.RFC3339), r.CreatedAfter.Format(time.RFC3339))
	case !r.UpdatedAfter.IsZero() && !r.UpdatedBefore.IsZero() && !r.UpdatedBefore.After(r.UpdatedAfter):
		return invalidList("updated-before %s is not after updated-after %s", r.UpdatedBefore.Format(time.RFC3339), r.UpdatedAfter.Format(time.RFC3339))
	}
	if _, err := ParseListCursor(r.After); err != nil {
		return invalidList("%v", err)
	}
	return nil
}

func invalidList(format string, args ...any) error {
	return Permanent("list instances", "", fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...)))
}

// PageSize is r.Limit, or DefaultListLimit for 0.
func (r ListRequest) PageSize() int {
	if r.Limit == 0 {
		return DefaultListLimit
	}
	return r.Limit
}

// ListCursor is the position after which a page starts: the last instance
// of the previous page (newest first: creation time, then ID, descending).
type ListCursor struct {
	CreatedAt time.Time
	Instance  string
}

// String encodes c for InstancePage.Next.
func (c ListCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + ":" + c.Instance))
}

// ParseListCursor reads an InstancePage.Next; "" is the zero cursor (the
// first page).
func ParseListCursor(s string) (ListCursor, error) {
	if s == "" {
		return ListCursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	us, id, ok := strings.Cut(string(b), ":")
	if err != nil || !ok {
		return ListCursor{}, fmt.Errorf("cursor %q is not a page's Next", s)
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return ListCursor{}, fmt.Errorf("cursor %q is not a page's Next", s)
	}
	return ListCursor{CreatedAt: time.UnixMicro(n), Instance: id}, nil
}

// NextPage is the InstancePage of infos, a page of at most size read with
// one more row asked for: when there is that extra row, it is dropped and
// Next points after the page's last.
func NextPage(infos []InstanceInfo, size int) InstancePage {
	if len(infos) <= size {
		return InstancePage{Instances: infos}
	}
	infos = infos[:size]
	last := infos[size-1]
	return InstancePage{Instances: infos, Next: ListCursor{CreatedAt: last.CreatedAt, Instance: last.Instance}.String()}
}
