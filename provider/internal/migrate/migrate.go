// Package migrate reads a store's numbered SQL migrations and says which to
// run; each store runs them on its own connection, in its own transactions,
// and records them in the version table goose (the migration tool the stores
// used before) keeps, goose_db_version, so a schema goose migrated keeps its
// history.
//
// Files are named NNNNN_name.sql and hold an Up and a Down section, each
// introduced by a "-- +goose Up" or "-- +goose Down" line; a section runs
// whole, as one multi-statement execution ("-- +goose StatementBegin/End"
// lines are dropped). Any other "-- +goose" annotation is refused.
//
// It is hand-written rather than goose itself: goose's module requires the
// drivers of a dozen databases and gRPC, which every user of the library
// would otherwise have in their module graph. It imports only the standard
// library.
package migrate

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// VersionTable is goose's table of applied migrations.
const VersionTable = "goose_db_version"

// Migration is one numbered file.
type Migration struct {
	Version int64
	File    string
	Up      string
	Down    string
}

// Load reads every *.sql file of fsys's root, in version order.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var all []Migration
	for _, name := range names {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		m, err := parse(name, string(raw))
		if err != nil {
			return nil, err
		}
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b Migration) int { return int(a.Version - b.Version) })
	for i := 1; i < len(all); i++ {
		if all[i].Version == all[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", all[i-1].File, all[i].File, all[i].Version)
		}
	}
	return all, nil
}

// parse splits a file into its Up and Down sections.
func parse(name, text string) (Migration, error) {
	prefix, _, ok := strings.Cut(path.Base(name), "_")
	version, err := strconv.ParseInt(prefix, 10, 64)
	if !ok || err != nil || version <= 0 {
		return Migration{}, fmt.Errorf("migration %s: the name must start with a positive version number and '_'", name)
	}
	var up, down strings.Builder
	var section *strings.Builder // nil before the first section
	for _, line := range strings.SplitAfter(text, "\n") {
		annotation, isAnnotation := strings.CutPrefix(strings.TrimSpace(line), "-- +goose ")
		switch {
		case !isAnnotation:
			if section != nil {
				section.WriteString(line)
			}
		case annotation == "Up":
			section = &up
		case annotation == "Down":
			section = &down
		case annotation == "StatementBegin" || annotation == "StatementEnd":
		default:
			return Migration{}, fmt.Errorf("migration %s: unsupported annotation %q", name, strings.TrimSpace(line))
		}
	}
	if strings.TrimSpace(up.String()) == "" {
		return Migration{}, fmt.Errorf("migration %s: no -- +goose Up section", name)
	}
	return Migration{Version: version, File: name, Up: up.String(), Down: down.String()}, nil
}

// Pending are the migrations not applied yet, in version order.
func Pending(all []Migration, applied map[int64]bool) []Migration {
	var out []Migration
	for _, m := range all {
		if !applied[m.Version] {
			out = append(out, m)
		}
	}
	return out
}

// Above are the applied migrations newer than version, newest first: what
// rolling back to version undoes.
func Above(all []Migration, applied map[int64]bool, version int64) []Migration {
	var out []Migration
	for _, m := range slices.Backward(all) {
		if m.Version > version && applied[m.Version] {
			out = append(out, m)
		}
	}
	return out
}
