package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/internal/inspect"
)

// maxTreeNodes bounds what tree reads: one status and one children query
// per node.
const maxTreeNodes = 1000

func (c *cli) treeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "tree INSTANCE",
		Short: "Show an instance and its sub-orchestrations, with their statuses",
		Args:  args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			root, cut, err := inspect.Tree(cmd.Context(), c.client, c.provider, a[0], maxTreeNodes)
			if err != nil {
				return notFoundHint(err, a[0])
			}
			if cut {
				fmt.Fprintf(cmd.ErrOrStderr(), "tree cut at %d instances\n", maxTreeNodes)
			}
			return c.print(root, func() { printTree(c.stdout, root, "", "") })
		},
	}
}

// printTree draws n under prefix, as tree(1) does.
func printTree(w io.Writer, n *inspect.Node, prefix, branch string) {
	fmt.Fprintf(w, "%s%s%s  %s  %s\n", prefix, branch, n.Instance, n.Orchestration, n.Status)
	switch branch {
	case "├─ ":
		prefix += "│  "
	case "└─ ":
		prefix += "   "
	}
	for i, child := range n.Children {
		b := "├─ "
		if i == len(n.Children)-1 {
			b = "└─ "
		}
		printTree(w, child, prefix, b)
	}
}
