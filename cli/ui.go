package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/ui"
)

func (c *cli) uiCommand() *cobra.Command {
	var (
		addr    string
		actions bool
	)
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web view of the store's instances (read-only unless --actions)",
		Long: "ui serves pages of the store's instances, their histories as timelines, and the store's queues and workers,\n" +
			"until interrupted. It listens on loopback by default; --actions enables raise, cancel, terminate and delete,\n" +
			"each confirmed on a page of its own.",
		Args: args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usagef("listen on %s: %v", addr, err)
			}
			mode := "read-only"
			if actions {
				mode = "actions on"
			}
			fmt.Fprintf(c.stdout, "duroxide ui: http://%s/ (%s; Ctrl-C stops)\n", ln.Addr(), mode)
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			h := ui.New(c.client, c.provider, ui.Options{Actions: actions, Logger: logger})
			return serve(cmd.Context(), ln, h)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8233", "address to listen on")
	cmd.Flags().BoolVar(&actions, "actions", false, "allow raise, cancel, terminate and delete from the pages")
	return cmd
}

// serve serves h on ln until ctx ends, then lets requests in flight finish.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop serving: %w", err)
	}
	return nil
}
