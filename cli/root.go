package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// Environment variables read when the matching flag is not given. The
// PostgreSQL ones are those a WorkerPool's pods get, so the CLI works with a
// worker's settings as they are.
const (
	envStore       = "DUROXIDE_STORE"
	envPostgresURL = "DUROXIDE_POSTGRES_URL"
	envSchema      = "DUROXIDE_POSTGRES_SCHEMA"
)

// Exit codes:
//   - exitFailed: the command ran and failed, or the instance it waited for
//     failed or was not found;
//   - exitUsage: the command was not understood (bad arguments, no store);
//   - exitTimeout: wait's timeout passed before the instance finished.
const (
	exitFailed  = 1
	exitUsage   = 2
	exitTimeout = 3
)

// cli holds the global flags and the store the commands share.
type cli struct {
	store, schema, output string
	stdout                io.Writer
	// stdin answers confirmations when terminal says a person is there.
	stdin    io.Reader
	terminal bool
	// registry is the code `replay` checks histories against.
	registry *runtime.Registry

	provider provider.Provider
	client   *runtime.Client
}

// failedError makes a command exit with exitFailed after printing its result,
// e.g. `wait` on an instance that failed.
type failedError struct{ msg string }

func (e *failedError) Error() string { return e.msg }

// timeoutError makes `wait` exit with exitTimeout.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg }

// Option configures Run.
type Option func(*cli)

// WithStdin gives the commands that ask for a confirmation (purge) their
// input; terminal says a person types it. Without it, Main reads the
// process's stdin and asks only when it is a terminal.
func WithStdin(r io.Reader, terminal bool) Option {
	return func(c *cli) { c.stdin, c.terminal = r, terminal }
}

// WithRegistry gives `replay` the orchestrations to check recorded histories
// against. A team builds its own duroxide with its registry:
//
//	func main() { os.Exit(cli.Main(myapp.Registry())) }
func WithRegistry(reg *runtime.Registry) Option { return func(c *cli) { c.registry = reg } }

// Main runs the command line of the process with the orchestrations of reg
// (nil: replay has none) and returns the exit code.
func Main(reg *runtime.Registry) int {
	if isVetTool(os.Args[1:]) {
		runVetTool() // does not return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdout, os.Stderr, WithRegistry(reg), WithStdin(os.Stdin, isTerminal(os.Stdin)))
}

// Run runs the command line args and returns the exit code: 0 success, 1
// failure (including an instance that failed or was not found), 2 a command
// not understood, 3 a wait that timed out.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	return run(ctx, args, stdout, stderr, opts...)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	c := &cli{stdout: stdout}
	for _, o := range opts {
		o(c)
	}
	root := c.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	c.close()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "duroxide:", err)
	var failed *failedError
	var usage *usageError
	var timeout *timeoutError
	switch {
	case errors.As(err, &failed):
		return exitFailed
	case errors.As(err, &timeout):
		return exitTimeout
	case errors.As(err, &usage), strings.HasPrefix(err.Error(), "unknown command"):
		return exitUsage
	default:
		return exitFailed
	}
}

// isTerminal reports whether f is a character device: a person at a
// terminal, not a pipe or a file.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// usageError is bad input: a malformed argument, a missing store.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

func (c *cli) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "duroxide",
		Short: "Inspect and manage duroxide orchestration instances in a store",
		Long: "duroxide talks to a store (PostgreSQL or SQLite) directly: it needs no worker and no Kubernetes.\n\n" +
			"The store is --store, else $" + envStore + ", else $" + envPostgresURL + " (a WorkerPool pod's setting).\n" +
			"A postgres:// or postgresql:// URL (in any letter case) or keyword/value settings (host=... dbname=...) select PostgreSQL\n" +
			"(schema: --schema, else $" + envSchema + ", else \"" + postgres.DefaultSchema + "\"); anything else is a SQLite file, which must exist\n" +
			"(write sqlite:PATH for a file named like key=value). Keep passwords in the environment: flags show in process listings.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.PersistentFlags().StringVar(&c.store, "store", "", "PostgreSQL URL or SQLite file (default $"+envStore+" or $"+envPostgresURL+")")
	root.PersistentFlags().StringVar(&c.schema, "schema", "", "PostgreSQL schema (default $"+envSchema+" or \""+postgres.DefaultSchema+"\")")
	root.PersistentFlags().StringVarP(&c.output, "output", "o", "text", "output format: text or json")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if c.output != "text" && c.output != "json" {
			return usagef("--output must be text or json, not %q", c.output)
		}
		return nil
	}
	root.AddCommand(c.startCommand(), c.raiseCommand(), c.terminateCommand(), c.cancelCommand(), c.rewindCommand(), c.retryCommand(), c.waitCommand(),
		c.statusCommand(), c.kvCommand(), c.treeCommand(), c.watchCommand(), c.historyCommand(), c.listCommand(), c.deleteCommand(), c.purgeCommand(), c.statsCommand(),
		c.workersCommand(), c.uiCommand(), c.replayCommand(), c.vetCommand(), c.versionCommand())
	root.Version = buildVersion()
	root.SetVersionTemplate("duroxide {{.Version}}\n")
	return root
}

// open connects to the store; every command but help calls it first.
func (c *cli) open(ctx context.Context) error {
	target := cmp.Or(c.store, os.Getenv(envStore), os.Getenv(envPostgresURL))
	if target == "" {
		return usagef("no store: pass --store or set $%s (a PostgreSQL connection string or a SQLite file)", envStore)
	}
	p, err := openStore(ctx, target, cmp.Or(c.schema, os.Getenv(envSchema)))
	if err != nil {
		return err
	}
	c.provider = p
	c.client = runtime.NewClient(p)
	return nil
}

// openStore opens the store target names: PostgreSQL when
// postgres.IsConnString recognises it, else a SQLite file.
func openStore(ctx context.Context, target, schema string) (provider.Provider, error) {
	if postgres.IsConnString(target) {
		return openPostgres(ctx, target, schema)
	}
	if schema != "" {
		return nil, usagef("--schema applies to PostgreSQL stores only")
	}
	return openSQLite(ctx, strings.TrimPrefix(target, "sqlite:"))
}

// openPostgres reports a string or schema that can never work as bad input.
// postgres.Open keeps the connection string out of its errors.
func openPostgres(ctx context.Context, target, schema string) (provider.Provider, error) {
	p, err := postgres.Open(ctx, target, postgres.Options{Schema: schema, MaxConns: 4, RequireSchema: true})
	switch {
	case errors.Is(err, postgres.ErrSchemaNotFound):
		return nil, usagef("schema %q does not exist in that database: check --schema (a pool's workers create its schema when they first start)",
			cmp.Or(schema, postgres.DefaultSchema))
	case errors.Is(err, postgres.ErrInvalidConnString), errors.Is(err, postgres.ErrInvalidSchema):
		return nil, &usageError{err}
	case err != nil:
		return nil, err
	}
	return p, nil
}

// openSQLite opens an existing SQLite file. A store string that is neither
// form lands here, so its errors name the path without its passwords.
func openSQLite(ctx context.Context, path string) (provider.Provider, error) {
	// A typo must not silently create an empty database and report "no instances".
	if _, err := os.Stat(path); err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err // the path again, unredacted
		}
		return nil, usagef("SQLite store %s: %w (a PostgreSQL store is a postgres:// or postgresql:// URL or keyword/value settings such as host=...)",
			postgres.RedactConnString(path), err)
	}
	p, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open SQLite store %s: %w", path, err)
	}
	return p, nil
}

func (c *cli) close() {
	if c.provider != nil {
		_ = c.provider.Close()
	}
}

// args accepts exactly the named positional arguments.
func args(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, got []string) error {
		if len(got) != len(names) {
			return usagef("%s takes %d argument(s) (%s), got %d", cmd.Name(), len(names), strings.Join(names, ", "), len(got))
		}
		return nil
	}
}
