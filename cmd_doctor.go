package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/doctor"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newDoctor is `bulkhead doctor`: the checks of package doctor, for a
// person or (--json) a script.
func newDoctor(g *globals) *cobra.Command {
	var asJSON, allowNet bool
	cmd := &cobra.Command{
		Use:   "doctor [--json] [--allow-net]",
		Short: "Check Ollama, the configured models, the data directory and the MCP servers, and say how to fix what fails",
		Long: `Check Ollama, the configured models, the data directory and the enabled
MCP servers, and say how to fix what fails.

Every enabled MCP server is started, its tools are listed, and it is
stopped: this refreshes the tool list bulkhead caches for it (in the data
directory, mcp-cache/), which is what bulkhead starts from without
starting the server; a process serving the data directory takes the
new lists at once. Run it after updating an MCP server.

A server whose config names network endpoints (mcp.NAME.net: npx's
registry, say) is asked for them on the terminal, on standard error;
--allow-net allows them for this listing without asking. Off a
terminal (a pipe, CI) nothing is asked and, without --allow-net, none is
allowed: a server that cannot start without them fails with the fix
that names the flag — or, when bulkhead has its tool list cached, is a
note, since bulkhead starts from that list.

--json prints the checks as one JSON document instead:
{"ok": false, "checks": [{"name", "ok", "note", "detail", "fix"}, …]}.
The exit status is the same: 1 when a check fails, 2 for a
configuration that does not load (then the one check is the
configuration's).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			cfg, err := g.load(cmd)
			if err != nil {
				if asJSON {
					_, _ = doctor.PrintJSON(out, []doctor.Check{{Name: "configuration", Detail: err.Error(), Fix: "fix the key it names, in the file or the flag or variable it names"}})
				}
				return err
			}
			ask := newPrompt(cmd)
			defer ask.close()
			// Listing a server asks, on this terminal, for the network its
			// first start needs (npx downloads it).
			asker := &terminalNet{ask: ask, log: cmd.ErrOrStderr(), allow: allowNet}
			dopts := doctor.Options{
				MCP: func(ctx context.Context, cfg config.Config) []mcp.Refreshed {
					return engine.RefreshMCP(apps.WithNetwork(ctx, asker), cfg)
				},
				Network: asker.network,
			}
			// A served data directory is reported as such, not opened.
			if cli, err := g.served(cmd, cfg, "doctor"); err == nil {
				defer cli.Close()
				dopts.Served = func(ctx context.Context) (string, bool) { return servedDetail(ctx, cli) }
				// What it just listed reaches the serving process at once.
				dopts.Relist = func(context.Context) ([]string, error) { return cli.Relist() }
			} else if !errors.Is(err, serve.ErrNotServed) {
				// A serving process this one cannot talk to: the database
				// check says why, not "another bulkhead".
				dopts.ServedErr = termtext.Sanitize(err.Error())
			}
			checks := doctor.Run(cmd.Context(), cfg, dopts)
			ok := true
			if asJSON {
				if ok, err = doctor.PrintJSON(out, checks); err != nil {
					return err
				}
			} else {
				ok = doctor.Print(out, checks)
			}
			if !ok {
				return &exitError{exitFailed, errors.New("some checks failed")}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks as one JSON document")
	cmd.Flags().BoolVar(&allowNet, "allow-net", false, "allow the endpoints each MCP server's config names (mcp.NAME.net) while it is listed, without asking")
	return cmd
}
