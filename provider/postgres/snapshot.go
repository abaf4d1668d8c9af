package postgres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// pgSnapshot is a pg_snapshot read from its text form, xmin:xmax:xip,...:
// Watch tests announced changes against the snapshot it started with, as
// pg_visible_in_snapshot does on the server, without a round trip.
type pgSnapshot struct {
	xmin, xmax int64
	inProgress []int64
}

func parseSnapshot(text string) (pgSnapshot, error) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 {
		return pgSnapshot{}, fmt.Errorf("snapshot %q: want xmin:xmax:xip", text)
	}
	var s pgSnapshot
	var err error
	if s.xmin, err = strconv.ParseInt(parts[0], 10, 64); err != nil {
		return pgSnapshot{}, fmt.Errorf("snapshot %q: xmin: %w", text, err)
	}
	if s.xmax, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
		return pgSnapshot{}, fmt.Errorf("snapshot %q: xmax: %w", text, err)
	}
	if parts[2] == "" {
		return s, nil
	}
	for _, x := range strings.Split(parts[2], ",") {
		xid, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return pgSnapshot{}, fmt.Errorf("snapshot %q: in-progress list: %w", text, err)
		}
		s.inProgress = append(s.inProgress, xid)
	}
	return s, nil
}

// sees reports whether the snapshot sees the work of transaction xid, which
// committed: it had ended when the snapshot was taken.
func (s pgSnapshot) sees(xid int64) bool {
	switch {
	case xid < s.xmin:
		return true
	case xid >= s.xmax:
		return false
	}
	return !slices.Contains(s.inProgress, xid)
}
