package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/mcpconfig"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newMCP is `bulkhead mcp`: add, list and remove MCP servers.
func newMCP(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Add, list and remove MCP servers (each becomes an isolated app)",
	}
	var folders, read, net, env []string
	var allowNet bool
	add := &cobra.Command{
		Use:   "add NAME [--folder DIR]... [--net HOST:PORT]... -- COMMAND [ARGS...]",
		Short: "Add an MCP server to the config (enabled), start it once and list its tools",
		Long: `Add an MCP server to the config file (mcp.NAME, and NAME in enable),
start it once in its sandbox, and list its tools with their effects. Its
tool list is cached, so bulkhead starts from it without starting the
server; a process serving the data directory takes it at once.

--folder grants a folder to read and write (repeatable), --read one to
read, --net an endpoint its process may reach, each asked on the
terminal before this start (--allow-net allows them without asking).
A server started through npx (pnpm dlx, yarn dlx, bunx) downloads its
package first: with no --net, the registry your npm is configured for
(npm config get registry) is its endpoint.

  bulkhead mcp add fs --folder ~/notes -- npx -y @modelcontextprotocol/server-filesystem ~/notes`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return &exitError{2, errors.New("give the server's name, then -- and its command: bulkhead mcp add NAME -- COMMAND [ARGS...]")}
			}
			name, command := args[0], args[1:]
			s := mcpconfig.Server{Command: command[0], Args: command[1:], Folders: absAll(folders), Read: absAll(read), Net: net}
			if len(env) > 0 {
				s.Env = map[string]string{}
				for _, kv := range env {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return &exitError{2, fmt.Errorf("--env %q: want NAME=VALUE", kv)}
					}
					s.Env[k] = v
				}
			}
			out := cmd.OutOrStdout()
			if len(s.Net) == 0 && slices.Contains([]string{"npx", "pnpm", "pnpx", "yarn", "bunx"}, filepath.Base(s.Command)) {
				if reg, err := mcp.NPMRegistry(); err == nil {
					if ep, err := mcp.RegistryEndpoint(reg); err == nil {
						s.Net = []string{ep}
						fmt.Fprintf(out, "%s downloads the server from %s (your npm's registry): that is its network endpoint.\n", filepath.Base(s.Command), ep)
					}
				}
			}
			path := g.configFile
			if path == "" {
				path = config.DefaultFile()
			}
			if err := mcpconfig.Add(path, name, s); err != nil {
				return &exitError{2, err}
			}
			fmt.Fprintf(out, "added mcp.%s to %s, enabled\n", name, path)
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			var asker apps.Network = terminalNet{in: cmd.InOrStdin(), out: out, allow: allowNet}
			a, err := listing(cmd.Context(), cfg, name, asker, cmd.ErrOrStderr())
			if err != nil {
				return &exitError{1, fmt.Errorf("%w\nits stderr is in %s; `bulkhead mcp add` again once it is fixed, or `bulkhead mcp rm %s`", err, filepath.Join(cfg.DataDir, "bulkhead.log"), name)}
			}
			printTools(out, name, a)
			tellServing(cmd, g, cfg, name, out)
			return nil
		},
	}
	add.Flags().StringArrayVar(&folders, "folder", nil, "a folder the server may read and write (repeatable)")
	add.Flags().StringArrayVar(&read, "read", nil, "a folder the server may only read (repeatable)")
	add.Flags().StringArrayVar(&net, "net", nil, "an endpoint HOST:PORT its process may reach, asked first (repeatable)")
	add.Flags().StringArrayVar(&env, "env", nil, "NAME=VALUE passed to the server (repeatable)")
	add.Flags().BoolVar(&allowNet, "allow-net", false, "allow its endpoints for this listing without asking")

	list := &cobra.Command{
		Use:   "list",
		Short: "The configured MCP servers: enabled or not, listed or not",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			return printSafely(cmd.OutOrStdout(), false, func(w io.Writer) error { return printServers(w, cfg) })
		},
	}
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an MCP server from the config (and from enable)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := g.configFile
			if path == "" {
				path = config.DefaultFile()
			}
			removed, err := mcpconfig.Remove(path, args[0])
			if err != nil {
				return &exitError{2, err}
			}
			if !removed {
				return &exitError{2, fmt.Errorf("no MCP server %q in %s", args[0], path)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed mcp.%s from %s\n", args[0], path)
			return nil
		},
	}
	cmd.AddCommand(add, list, rm)
	return cmd
}

// tellServing has the process serving cfg's data directory, if one
// does, take the tool list just cached for name (serve.Client.Relist):
// its open sessions use the server from their next request, those that
// start later from their first.
func tellServing(cmd *cobra.Command, g *globals, cfg config.Config, name string, out io.Writer) {
	cli, err := g.served(cmd, cfg, "mcp")
	if err != nil {
		return // none serves it (the next one starts from the cache), or none this one can talk to
	}
	defer cli.Close()
	pid := cli.Welcome().Pid
	if _, err := cli.Relist(); err != nil {
		fmt.Fprintf(out, "the bulkhead serving %s (pid %d) could not be told: %s; it takes the list once it starts again\n", cfg.DataDir, pid, termtext.OneLine(err.Error()))
		return
	}
	// This session's apps are those of a session started here now.
	as, _ := cli.Apps()
	if slices.ContainsFunc(as, func(a serve.AppInfo) bool { return a.Manifest.Name == name && a.Unlisted == "" }) {
		fmt.Fprintf(out, "the bulkhead serving %s (pid %d) runs %s now: open sessions that enable it use it from their next request\n", cfg.DataDir, pid, termtext.OneLine(name))
		return
	}
	fmt.Fprintf(out, "the bulkhead serving %s (pid %d) installs %s in the sessions that start from now on (open ones keep the apps they started with)\n", cfg.DataDir, pid, termtext.OneLine(name))
}

func absAll(dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		d = config.ExpandHome(d)
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		out = append(out, d)
	}
	return out
}

// listing lists the server live, saying every few seconds that it still
// works (npx may be downloading it).
func listing(ctx context.Context, cfg config.Config, name string, asker apps.Network, progress io.Writer) (*mcp.App, error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		fmt.Fprintf(progress, "starting %s to list its tools (a first run through npx downloads it)…\n", name)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(progress, "  still starting %s · %s\n", name, time.Since(start).Round(time.Second))
			}
		}
	})
	a, err := engine.ListMCP(apps.WithNetwork(ctx, asker), cfg, name)
	close(done)
	wg.Wait()
	return a, err
}

func printTools(w io.Writer, name string, a *mcp.App) {
	tools := a.Tools()
	fmt.Fprintf(w, "%s lists %d tools (cached; bulkhead starts from this list):\n", termtext.OneLine(name), len(tools))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, t := range tools {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", termtext.OneLine(t.Tool), t.Effect, termtext.OneLine(t.Functionality))
	}
	tw.Flush()
}

func printServers(w io.Writer, cfg config.Config) error {
	if len(cfg.MCP) == 0 {
		fmt.Fprintln(w, "no MCP servers configured: bulkhead mcp add NAME -- COMMAND [ARGS...]")
		return nil
	}
	names := make([]string, 0, len(cfg.MCP))
	for n := range cfg.MCP {
		names = append(names, n)
	}
	sort.Strings(names)
	enabled := func(n string) bool { return slices.Contains(cfg.Enable, n) || slices.Contains(cfg.Enable, "mcp") }
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tENABLED\tRUNS\tFOLDERS\tNET")
	for _, n := range names {
		s := cfg.MCP[n]
		runs := s.URL
		if runs == "" {
			runs = strings.Join(append([]string{s.Command}, s.Args...), " ")
		}
		on := "no (add it to enable)"
		if enabled(n) {
			on = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n, on, runs, strings.Join(s.Folders, ","), strings.Join(s.Net, ","))
	}
	return tw.Flush()
}

// terminalNet asks on the terminal, for a listing started from it
// (`bulkhead mcp add`, doctor), whether the server's process may reach
// each endpoint of its config. Not on a terminal, it allows none unless
// allow is set. The listing's process stops when the listing ends, so
// the answer needs no lease.
type terminalNet struct {
	in    io.Reader
	out   io.Writer
	allow bool
}

func (t terminalNet) AllowNetwork(_ context.Context, app, endpoint string) (apps.Lease, bool) {
	if t.allow {
		fmt.Fprintf(t.out, "%s may connect to %s while it lists its tools (--allow-net)\n", app, endpoint)
		return nil, true
	}
	f, ok := t.in.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		fmt.Fprintf(t.out, "%s would connect to %s: not asked (not a terminal), so not allowed; --allow-net allows it\n", app, endpoint)
		return nil, false
	}
	fmt.Fprintf(t.out, "Network: %s's process may connect to %s, and could send there whatever it reads. Allow it, for this listing? [y/N] ", app, endpoint)
	line, _ := bufio.NewReader(t.in).ReadString('\n')
	return nil, strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
}
