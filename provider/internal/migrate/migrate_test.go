package migrate

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"00002_b.sql": {Data: []byte("-- +goose Up\n-- +goose StatementBegin\nDO $$ BEGIN END $$;\n-- +goose StatementEnd\n-- +goose Down\nDROP TABLE b;\n")},
		"00001_a.sql": {Data: []byte("-- a comment before\n-- +goose Up\nCREATE TABLE a (x INT);\n\n-- +goose Down\nDROP TABLE a;\n")},
		"README.md":   {Data: []byte("not a migration")},
	}
	all, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Version != 1 || all[1].Version != 2 {
		t.Fatalf("loaded %+v, want versions 1 and 2 in order", all)
	}
	if all[0].Up != "CREATE TABLE a (x INT);\n\n" || all[0].Down != "DROP TABLE a;\n" {
		t.Errorf("sections of %s: up %q, down %q", all[0].File, all[0].Up, all[0].Down)
	}
	if all[1].Up != "DO $$ BEGIN END $$;\n" {
		t.Errorf("StatementBegin/End kept in %q", all[1].Up)
	}
}

func TestLoadRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ file, data, want string }{
		"no version":      {"a_b.sql", "-- +goose Up\nSELECT 1;\n", "version number"},
		"zero version":    {"0_b.sql", "-- +goose Up\nSELECT 1;\n", "version number"},
		"no up":           {"00001_a.sql", "SELECT 1;\n", "no -- +goose Up"},
		"no transaction":  {"00001_a.sql", "-- +goose NO TRANSACTION\n-- +goose Up\nSELECT 1;\n", "unsupported annotation"},
		"shared versions": {"00001_a.sql", "-- +goose Up\nSELECT 1;\n", "share version"},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{tc.file: {Data: []byte(tc.data)}}
			if name == "shared versions" {
				fsys["1_b.sql"] = &fstest.MapFile{Data: []byte(tc.data)}
			}
			_, err := Load(fsys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestPendingAndAbove(t *testing.T) {
	all := []Migration{{Version: 1}, {Version: 2}, {Version: 3}, {Version: 4}}
	applied := map[int64]bool{1: true, 2: true, 4: true}
	versions := func(ms []Migration) (out []int64) {
		for _, m := range ms {
			out = append(out, m.Version)
		}
		return out
	}
	if got := versions(Pending(all, applied)); len(got) != 1 || got[0] != 3 {
		t.Errorf("Pending = %v, want [3]", got)
	}
	if got := versions(Above(all, applied, 1)); len(got) != 2 || got[0] != 4 || got[1] != 2 {
		t.Errorf("Above(1) = %v, want [4 2]", got)
	}
	if got := Above(all, applied, 4); len(got) != 0 {
		t.Errorf("Above(4) = %v, want none", versions(got))
	}
}
