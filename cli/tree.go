package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/provider"
)

// maxTreeNodes bounds what tree reads: one status and one children query
// per node.
const maxTreeNodes = 1000

// treeNode is an instance and its sub-orchestrations, as tree prints them.
type treeNode struct {
	Instance      string      `json:"instance"`
	Orchestration string      `json:"orchestration"`
	Status        string      `json:"status"`
	Children      []*treeNode `json:"children,omitempty"`
}

func (c *cli) treeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "tree INSTANCE",
		Short: "Show an instance and its sub-orchestrations, with their statuses",
		Args:  args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			budget := maxTreeNodes
			root, err := c.readTree(cmd.Context(), a[0], &budget)
			if err != nil {
				return notFoundHint(err, a[0])
			}
			if budget < 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "tree cut at %d instances\n", maxTreeNodes)
			}
			return c.print(root, func() { printTree(c.stdout, root, "", "") })
		},
	}
}

// readTree reads id and its descendants, depth first, while budget lasts.
func (c *cli) readTree(ctx context.Context, id string, budget *int) (*treeNode, error) {
	*budget--
	st, err := c.client.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	node := &treeNode{Instance: id, Orchestration: st.Orchestration, Status: string(st.Status)}
	if st.Stalled() {
		node.Status = string(provider.StatusStalled)
	}
	children, err := c.provider.ListChildren(ctx, provider.InstanceRequest{Instance: id})
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", id, err)
	}
	for _, child := range children {
		if *budget <= 0 {
			*budget = -1
			break
		}
		n, err := c.readTree(ctx, child, budget)
		if err != nil {
			return nil, err
		}
		node.Children = append(node.Children, n)
	}
	return node, nil
}

// printTree draws n under prefix, as tree(1) does.
func printTree(w io.Writer, n *treeNode, prefix, branch string) {
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
