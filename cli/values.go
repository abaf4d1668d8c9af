package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"
)

func (c *cli) kvCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "kv INSTANCE [KEY]",
		Short: "Show an instance's durable values (OrchestrationContext.SetValue), or one of them",
		Long: "kv prints every durable value of the instance, one KEY=JSON line each, sorted by key, as its last\n" +
			"committed turn left them; with KEY, that value alone (exit 1 when the instance holds none under it).",
		Args: func(cmd *cobra.Command, got []string) error {
			if len(got) < 1 || len(got) > 2 {
				return usagef("kv takes the instance and optionally a key, got %d argument(s)", len(got))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			values, err := c.client.Values(cmd.Context(), a[0])
			if err != nil {
				return notFoundHint(err, a[0])
			}
			if len(a) == 1 {
				return c.print(values, func() { printValues(c.stdout, values) })
			}
			v, ok := values[a[1]]
			if !ok {
				return fmt.Errorf("instance %s holds no value under key %q", a[0], a[1])
			}
			return c.print(v, func() { fmt.Fprintln(c.stdout, string(v)) })
		},
	}
}

func printValues(w io.Writer, values map[string]json.RawMessage) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(w, "%s=%s\n", k, values[k])
	}
}
