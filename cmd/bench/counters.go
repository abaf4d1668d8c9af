package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat CPU times; it is 100
// on every Linux architecture Go supports.
const clockTicks = 100

// counters are the figures a scenario's cost is measured by: commits in the
// benchmark database, CPU of this process and CPU of the PostgreSQL server.
type counters struct {
	commits   int64 // -1 when not measured (SQLite)
	benchCPU  time.Duration
	serverCPU time.Duration // -1 when the server's processes cannot be read
}

// meter reads counters. For PostgreSQL it reads pg_stat_database through a
// fresh connection each time and the server's CPU from /proc, which works
// when the server runs on this machine (make bench starts one).
type meter struct {
	pgURL      string
	postmaster int // 0 when unknown
}

// connect opens a connection for the benchmark's own queries. A failure says
// why without pgx's description of the target (user, database, host), as
// the provider's errors do.
func connect(ctx context.Context, pgURL string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, pgURL)
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		err = ce.Unwrap()
	}
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return conn, nil
}

func newMeter(ctx context.Context, pgURL string) (*meter, error) {
	m := &meter{pgURL: pgURL}
	if pgURL == "" {
		return m, nil
	}
	conn, err := connect(ctx, pgURL)
	if err != nil {
		return nil, fmt.Errorf("meter: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return nil, fmt.Errorf("meter: backend pid: %w", err)
	}
	if st, err := readProcStat(backend); err == nil {
		m.postmaster = st.ppid
	}
	return m, nil
}

// read returns the counters now. PostgreSQL flushes a backend's statistics
// when it has been idle for a second or when it exits, so callers settle the
// store (close it, or wait) before reading an end value.
func (m *meter) read(ctx context.Context, withCommits bool) (counters, error) {
	c := counters{commits: -1, serverCPU: -1, benchCPU: selfCPU()}
	if m.pgURL == "" || !withCommits {
		return c, nil
	}
	conn, err := connect(ctx, m.pgURL)
	if err != nil {
		return c, fmt.Errorf("meter: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	err = conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&c.commits)
	if err != nil {
		return c, fmt.Errorf("meter: pg_stat_database: %w", err)
	}
	if m.postmaster != 0 {
		if cpu, err := treeCPU(m.postmaster); err == nil {
			c.serverCPU = cpu
		}
	}
	return c, nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type procStat struct {
	ppid           int
	utime, stime   int64
	cutime, cstime int64
}

// readProcStat parses /proc/<pid>/stat (see proc(5)); the command name may
// hold spaces, so fields are counted from its closing parenthesis.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("short /proc/%d/stat", pid)
	}
	num := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	// f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14-17.
	return procStat{ppid: int(num(1)), utime: num(11), stime: num(12), cutime: num(13), cstime: num(14)}, nil
}

// treeCPU is the CPU used by the postmaster, its live children and the
// children it has reaped (cutime/cstime), so exited backends still count.
func treeCPU(postmaster int) (time.Duration, error) {
	root, err := readProcStat(postmaster)
	if err != nil {
		return 0, err
	}
	ticks := root.utime + root.stime + root.cutime + root.cstime
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == postmaster {
			continue
		}
		if st, err := readProcStat(pid); err == nil && st.ppid == postmaster {
			ticks += st.utime + st.stime
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// delta is what a scenario cost between two readings.
type delta struct {
	commits             int64 // -1 when not measured
	benchCPU, serverCPU time.Duration
}

func (a counters) until(b counters) delta {
	d := delta{commits: -1, benchCPU: b.benchCPU - a.benchCPU, serverCPU: -1}
	if a.commits >= 0 && b.commits >= 0 {
		d.commits = b.commits - a.commits
	}
	if a.serverCPU >= 0 && b.serverCPU >= 0 {
		d.serverCPU = b.serverCPU - a.serverCPU
	}
	return d
}

// columns renders the cost columns of a RESULT line.
func (d delta) columns(n int) string {
	tx, server := "na", "na"
	if d.commits >= 0 && n > 0 {
		tx = fmt.Sprintf("%.2f", float64(d.commits)/float64(n))
	}
	if d.serverCPU >= 0 {
		server = fmt.Sprintf("%.2f", d.serverCPU.Seconds())
	}
	return fmt.Sprintf("tx_per_orch=%s bench_cpu_s=%.2f server_cpu_s=%s", tx, d.benchCPU.Seconds(), server)
}
