package inspect

import (
	"context"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// Node is an instance and its sub-orchestrations.
type Node struct {
	Instance      string  `json:"instance"`
	Orchestration string  `json:"orchestration"`
	Status        string  `json:"status"`
	Children      []*Node `json:"children,omitempty"`
}

// Tree reads id and its descendants, depth first, reading at most max
// instances; cut reports that the budget ran out before the whole tree was
// read.
func Tree(ctx context.Context, c *runtime.Client, p provider.Provider, id string, max int) (root *Node, cut bool, err error) {
	budget := max
	root, err = readTree(ctx, c, p, id, &budget)
	return root, budget < 0, err
}

func readTree(ctx context.Context, c *runtime.Client, p provider.Provider, id string, budget *int) (*Node, error) {
	*budget--
	st, err := c.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	node := &Node{Instance: id, Orchestration: st.Orchestration, Status: string(st.Status)}
	if st.Stalled() {
		node.Status = string(provider.StatusStalled)
	}
	children, err := p.ListChildren(ctx, provider.InstanceRequest{Instance: id})
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", id, err)
	}
	for _, child := range children {
		if *budget <= 0 {
			*budget = -1
			break
		}
		n, err := readTree(ctx, c, p, child, budget)
		if err != nil {
			return nil, err
		}
		node.Children = append(node.Children, n)
	}
	return node, nil
}
