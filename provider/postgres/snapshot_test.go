package postgres

import "testing"

func TestSnapshotSeesWhatEndedBeforeIt(t *testing.T) {
	s, err := parseSnapshot("100:110:102,105")
	if err != nil {
		t.Fatal(err)
	}
	for xid, want := range map[int64]bool{99: true, 100: true, 101: true, 102: false, 105: false, 109: true, 110: false, 200: false} {
		if got := s.sees(xid); got != want {
			t.Errorf("sees(%d) = %v, want %v", xid, got, want)
		}
	}
	if s, err := parseSnapshot("7:7:"); err != nil || !s.sees(6) || s.sees(7) {
		t.Fatalf("empty in-progress list: %+v, %v", s, err)
	}
	for _, bad := range []string{"", "1:2", "x:2:", "1:y:", "1:2:3,z"} {
		if _, err := parseSnapshot(bad); err == nil {
			t.Errorf("parseSnapshot(%q) accepted", bad)
		}
	}
}
