package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/duroxide/duroxide-go/runtime/determinism"
)

func (c *cli) vetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "vet [packages]",
		Short: "Check orchestration code for nondeterminism (go vet with the duroxide analyzer)",
		Long: "vet runs `go vet -vettool=<this binary>` on the packages (default ./...) with the determinism\n" +
			"analyzer: inside functions registered as orchestrations, and what they call, it flags go statements,\n" +
			"time.Now and time.Sleep, random numbers, map iteration, channel operations and select, and I/O, each\n" +
			"with the replay-safe alternative. Silence one line with //duroxide:nondeterministic-ok.\n" +
			"The same binary also works as a vet tool directly: go vet -vettool=$(command -v duroxide) ./...",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				a = []string{"./..."}
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("vet: find this binary: %w", err)
			}
			goTool, err := exec.LookPath("go")
			if err != nil {
				return fmt.Errorf("vet needs the go command on PATH: %w", err)
			}
			if err := loadable(cmd, goTool, a); err != nil {
				return err
			}
			run := exec.CommandContext(cmd.Context(), goTool, append([]string{"vet", "-vettool=" + self}, a...)...)
			run.Stdout, run.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			var exit *exec.ExitError
			if err := run.Run(); errors.As(err, &exit) {
				return &failedError{"vet found problems (see above)"}
			} else if err != nil {
				return fmt.Errorf("vet: %w", err)
			}
			return nil
		},
	}
}

// loadable checks that the go command finds the packages vet is given: a
// pattern that matches nothing, a missing directory or an unresolvable
// import is a usage error (exit 2), not problems found in the code. With
// flags among the arguments, go vet alone judges them (they may take
// values go list would read as packages).
func loadable(cmd *cobra.Command, goTool string, args []string) error {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return nil
		}
	}
	var stderr strings.Builder
	list := exec.CommandContext(cmd.Context(), goTool, append([]string{"list"}, args...)...)
	list.Stderr = &stderr
	if err := list.Run(); err != nil {
		return usagef("vet cannot load the packages: %s", strings.TrimSpace(stderr.String()))
	}
	return nil
}

// isVetTool reports whether go vet started this binary as its -vettool: it
// asks for the version or the flags, or passes a package's config file.
func isVetTool(args []string) bool {
	if len(args) == 0 {
		return false
	}
	return strings.HasPrefix(args[0], "-V=") || args[0] == "-flags" || strings.HasSuffix(args[len(args)-1], ".cfg")
}

func runVetTool() { unitchecker.Main(determinism.Analyzer) }
