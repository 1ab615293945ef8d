package main

import (
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

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/headless"
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
	cmd.AddCommand(newMCPAdd(g), newMCPList(g), newMCPRm(g))
	return cmd
}

// newMCPAdd is `bulkhead mcp add`: a server written into the config (or
// changed there, once the person saw what changes), started once and
// listed; with its name alone, a configured server listed again.
func newMCPAdd(g *globals) *cobra.Command {
	var folders, read, net, env []string
	var allowNet, force bool
	add := &cobra.Command{
		Use:   "add NAME [--folder DIR]... [--net HOST:PORT]... -- COMMAND [ARGS...]",
		Short: "Add an MCP server to the config (enabled), start it once and list its tools; with NAME alone, list a configured one again",
		Long: `Add an MCP server to the config file (mcp.NAME, and NAME in enable),
start it once in its sandbox, and list its tools with their effects. Its
tool list is cached, so bulkhead starts from it without starting the
server; a process serving the data directory takes it at once. A server
whose listing fails is not added: the file is left as it was, unless
--force keeps it (enabled; bulkhead starts without it until it is
listed).

--folder grants a folder to read and write (repeatable), --read one to
read, --net an endpoint its process may reach, each asked on the
terminal before this start (--allow-net allows them without asking; off
a terminal, without it, none is allowed). A server started through npx
(pnpm dlx, yarn dlx, bunx) downloads its package first: with no --net,
the registry your npm is configured for (npm config get registry) is its
endpoint.

A NAME the config has already is changed only once you saw what changes
(command, args, env, folders, read, net) and said yes; its other keys
(tools, catalog, model, host, dir) and the file's comments stay. --force
changes it without asking; off a terminal, without --force, it is left
as it is (exit status 3). With NAME alone, the configured server is
started and listed again (and enabled): the fix the apps screen names
for a server that could not be listed.

  bulkhead mcp add fs --folder ~/notes -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  bulkhead mcp add fs --allow-net`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, dash := args[0], cmd.ArgsLenAtDash()
			ask := newPrompt(cmd)
			defer ask.close()
			if len(args) == 1 && dash < 0 {
				if len(folders)+len(read)+len(net)+len(env) > 0 {
					return &exitError{exitUsage, fmt.Errorf("--folder, --read, --net and --env change a server: give its command too (bulkhead mcp add %s [FLAGS] -- COMMAND [ARGS...])", name)}
				}
				return relistMCP(cmd, g, name, ask, allowNet)
			}
			if dash != 1 || len(args) < 2 {
				return &exitError{exitUsage, errors.New("give the server's name, then -- and its command: bulkhead mcp add NAME -- COMMAND [ARGS...]; or its name alone to list a configured server again")}
			}
			command := args[1:]
			s := mcpconfig.Server{Command: command[0], Args: command[1:], Folders: absAll(folders), Read: absAll(read), Net: net}
			if len(env) > 0 {
				s.Env = map[string]string{}
				for _, kv := range env {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return &exitError{exitUsage, fmt.Errorf("--env %q: want NAME=VALUE", kv)}
					}
					s.Env[k] = v
				}
			}
			out := cmd.OutOrStdout()
			if runner, npm := mcp.NPMRunner(s.Command); npm && len(s.Net) == 0 {
				if reg, err := mcp.NPMRegistry(); err == nil {
					if ep, err := mcp.RegistryEndpoint(reg); err == nil {
						s.Net = []string{ep}
						fmt.Fprintf(out, "%s downloads the server from %s (your npm's registry): that is its network endpoint.\n", runner, ep)
					}
				}
			}
			path := configPath(g)
			plan, err := mcpconfig.Preview(path, name, s)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if plan.Exists && len(plan.Changes) > 0 && !force {
				if err := confirmChange(ask, out, path, name, plan); err != nil {
					return err
				}
			}
			// The file as it was: a server whose listing fails is not
			// added (nor changed) unless --force.
			was, wasErr := os.ReadFile(path)
			undo := &undoAdd{path: path, was: was, existed: wasErr == nil, force: force}
			if wasErr != nil && !errors.Is(wasErr, os.ErrNotExist) {
				undo = nil // unreadable: nothing to put back
			}
			switch {
			case !plan.Exists:
				if err := mcpconfig.Add(path, name, s); err != nil {
					return &exitError{exitUsage, err}
				}
				fmt.Fprintf(out, "added mcp.%s to %s, enabled\n", name, path)
			case len(plan.Changes) > 0 || plan.Enable:
				if err := mcpconfig.Add(path, name, s); err != nil {
					return &exitError{exitUsage, err}
				}
				fmt.Fprintf(out, "changed mcp.%s in %s (%s), enabled\n", name, path, changedKeys(plan))
			default:
				fmt.Fprintf(out, "mcp.%s in %s says this already: nothing to write\n", name, path)
			}
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			if plan.Exists && len(plan.Changes) == 0 && !plan.Enable {
				undo = nil // nothing was written
			}
			return listAndTell(cmd, g, cfg, name, ask, allowNet, undo)
		},
	}
	add.Flags().StringArrayVar(&folders, "folder", nil, "a folder the server may read and write (repeatable)")
	add.Flags().StringArrayVar(&read, "read", nil, "a folder the server may only read (repeatable)")
	add.Flags().StringArrayVar(&net, "net", nil, "an endpoint HOST:PORT its process may reach, asked first (repeatable)")
	add.Flags().StringArrayVar(&env, "env", nil, "NAME=VALUE passed to the server (repeatable)")
	add.Flags().BoolVar(&allowNet, "allow-net", false, "allow its configured endpoints for this listing without asking (off a terminal, nothing is asked and none is allowed without it)")
	add.Flags().BoolVar(&force, "force", false, "change a server the config has already without asking, and keep a server in the config (enabled) even when its listing fails")
	return add
}

// configPath is the config file the mcp commands write.
func configPath(g *globals) string {
	if g.configFile != "" {
		return g.configFile
	}
	return config.DefaultFile()
}

// changedKeys names the keys a plan changes, for the line that says so.
func changedKeys(p mcpconfig.Plan) string {
	var ks []string
	for _, c := range p.Changes {
		ks = append(ks, c.Key)
	}
	if p.Enable {
		ks = append(ks, "enable")
	}
	return strings.Join(ks, ", ")
}

// confirmChange shows what adding a server the config has already would
// change, and asks whether to; off a terminal it asks nothing and
// leaves the entry as it is (exit status 3, naming --force).
func confirmChange(ask *prompt, out io.Writer, path, name string, p mcpconfig.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp.%s is in %s already; adding it again changes:\n", name, path)
	for _, c := range p.Changes {
		switch {
		case c.Old == "":
			fmt.Fprintf(&b, "  %s: (none) → %s\n", c.Key, c.New)
		case c.New == "":
			fmt.Fprintf(&b, "  %s: %s → (removed)\n", c.Key, c.Old)
		default:
			fmt.Fprintf(&b, "  %s: %s → %s\n", c.Key, c.Old, c.New)
		}
	}
	keeps := "the file's comments"
	if len(p.Kept) > 0 {
		keeps = strings.Join(p.Kept, ", ") + " and the file's comments"
	}
	fmt.Fprintf(&b, "and keeps %s as they are.\n", keeps)
	text := termtext.Sanitize(b.String())
	if !ask.tty {
		fmt.Fprint(out, text)
		return &exitError{headless.ExitUnanswered, fmt.Errorf("mcp.%s left as it was: changing it is asked on a terminal, and standard input is not one; the same `bulkhead mcp add` with --force changes it", name)}
	}
	if !ask.yes(text + fmt.Sprintf("Change mcp.%s? [y/N] ", name)) {
		return &exitError{exitFailed, fmt.Errorf("mcp.%s left as it was", name)}
	}
	return nil
}

// relistMCP is `bulkhead mcp add NAME` for a server the config has: it
// is enabled if it was not, started once (asking for its network),
// listed and cached.
func relistMCP(cmd *cobra.Command, g *globals, name string, ask *prompt, allowNet bool) error {
	cfg, err := g.load(cmd)
	if err != nil {
		return err
	}
	path := configPath(g)
	if _, ok := cfg.MCP[name]; !ok {
		return &exitError{exitUsage, fmt.Errorf("no MCP server %q in %s: bulkhead mcp add %s -- COMMAND [ARGS...] adds one", name, path, name)}
	}
	if !slices.Contains(cfg.Enable, name) && !slices.Contains(cfg.Enable, "mcp") {
		if err := mcpconfig.Enable(path, name); err != nil {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "enabled %s in %s\n", name, path)
		if cfg, err = g.load(cmd); err != nil {
			return err
		}
	}
	return listAndTell(cmd, g, cfg, name, ask, allowNet, nil)
}

// undoAdd is the config file as it was before `bulkhead mcp add` wrote
// it: a server whose listing fails is taken out again — the file put
// back as it was — unless --force keeps it.
type undoAdd struct {
	path    string
	was     []byte
	existed bool
	force   bool
}

// restore puts the file back as it was.
func (u *undoAdd) restore() error {
	if !u.existed {
		return os.Remove(u.path)
	}
	return os.WriteFile(u.path, u.was, 0o600)
}

// listAndTell lists the configured server name live, prints its tools
// and has the process serving the data directory, if one does, take
// them.
func listAndTell(cmd *cobra.Command, g *globals, cfg config.Config, name string, ask *prompt, allowNet bool, undo *undoAdd) error {
	out := cmd.OutOrStdout()
	// One writer for the progress lines and the network notes, which
	// come from two goroutines.
	errw := &syncWriter{w: cmd.ErrOrStderr()}
	asker := &terminalNet{ask: ask, log: errw, allow: allowNet}
	a, err := listing(cmd.Context(), cfg, name, asker, ask, errw)
	if err != nil {
		// Where its stderr went, once: the error of a server that exited
		// says it already.
		stderr := fmt.Sprintf("its stderr is in %s; ", filepath.Join(cfg.DataDir, "bulkhead.log"))
		if ee := (*mcp.ExitError)(nil); errors.As(err, &ee) && ee.Logged != "" {
			stderr = ""
		}
		if undo != nil && !undo.force {
			// Not added: the file is as it was.
			if rerr := undo.restore(); rerr != nil {
				return &exitError{exitFailed, fmt.Errorf("%w\nmcp.%s could not be taken out of %s again (%v): `bulkhead mcp rm %s` does", err, name, undo.path, rerr, name)}
			}
			fix := stderr + "the same `bulkhead mcp add` once it is fixed adds it, or with --force now (enabled: bulkhead starts without it until it is listed)"
			if n := asker.network(name); len(n.Refused) > 0 {
				fix = fmt.Sprintf("its network (%s) was not allowed: the same `bulkhead mcp add` with --allow-net allows it for a listing; ", strings.Join(n.Refused, ", ")) + fix
			}
			return &exitError{exitFailed, fmt.Errorf("%w\nmcp.%s was not added to %s: its listing failed, and %s is as it was\n%s", err, name, undo.path, undo.path, fix)}
		}
		fix := stderr + fmt.Sprintf("`bulkhead mcp add %s` again once it is fixed, or `bulkhead mcp rm %s`", name, name)
		if n := asker.network(name); len(n.Refused) > 0 {
			fix = fmt.Sprintf("its network (%s) was not allowed: `bulkhead mcp add %s --allow-net` allows it for a listing; ", strings.Join(n.Refused, ", "), name) + fix
		}
		// The config keeps it enabled: say so, and what that means at
		// the next start, rather than leave the person to find out.
		kept := fmt.Sprintf("mcp.%s stays in %s, enabled but not listed: bulkhead starts without it (the apps screen says why) until it is listed", name, configPath(g))
		return &exitError{exitFailed, fmt.Errorf("%w\n%s\n%s", err, kept, fix)}
	}
	printTools(out, name, a)
	tellServing(cmd, g, cfg, name, out)
	return nil
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
		fmt.Fprintf(out, "the bulkhead serving %s (pid %d) runs %s now: open sessions use it from their next request (those started with --apps keep the apps they chose)\n", cfg.DataDir, pid, termtext.OneLine(name))
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
// works (npx may be downloading it) — but never while a question waits
// for its answer, and counting from the last answer.
func listing(ctx context.Context, cfg config.Config, name string, asker apps.Network, ask *prompt, progress io.Writer) (*mcp.App, error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		how := ""
		if runner, ok := mcp.NPMRunner(cfg.MCP[name].Command); ok {
			how = " (a first run through " + runner + " downloads it)"
		}
		fmt.Fprintf(progress, "starting %s to list its tools%s…\n", name, how)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ask.between(start, func(since time.Time) {
					fmt.Fprintf(progress, "  still starting %s · %s\n", name, time.Since(since).Round(time.Second))
				})
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
	printBeyondTools(w, "", a.Summary())
}

// printBeyondTools says what a server's listing holds besides the
// functions of its tools: its resources, its prompts (listed, never
// run), and, a line each, what bulkhead does not support of it. Its
// names are the server's: each is shown on one line, escaped.
func printBeyondTools(w io.Writer, indent string, s mcp.Summary) {
	if s.Resources {
		fmt.Fprintf(w, "%s  resources: its own spoke lists and reads them (read_resource, list_resources)\n", indent)
	}
	if s.PromptCount > 0 {
		names := make([]string, 0, len(s.Prompts))
		for _, p := range s.Prompts {
			names = append(names, termtext.OneLine(p))
		}
		if len(names) > 10 {
			names = append(names[:10], "…")
		}
		fmt.Fprintf(w, "%s  prompts (%d, listed, never run): %s\n", indent, s.PromptCount, strings.Join(names, ", "))
	}
	for _, u := range s.Unsupported {
		fmt.Fprintf(w, "%s  not supported: %s\n", indent, termtext.OneLine(u))
	}
}

// newMCPList is `bulkhead mcp list`.
func newMCPList(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "The configured MCP servers: enabled or not, what they run, their folders, network and own data, and what each offers as last listed (resources, prompts, what is not supported)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			return printSafely(cmd.OutOrStdout(), false, func(w io.Writer) error { return printServers(w, cfg) })
		},
	}
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
	fmt.Fprintln(tw, "NAME\tENABLED\tRUNS\tFOLDERS\tNET\tDATA")
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
		data := "none yet"
		if s.URL != "" {
			data = "(remote)"
		} else if d := mcp.DataFolder(cfg.DataDir, n); exists(d) {
			data = config.ShortHome(d)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n, on, runs, strings.Join(s.Folders, ","), strings.Join(s.Net, ","), data)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// What each offers, from the listing cached for its configuration
	// (no server is started).
	fmt.Fprintln(w, "What each offers, as last listed:")
	cache := engine.MCPCache(cfg.DataDir)
	for _, n := range names {
		sum, ok := cache.Summary(n, engine.MCPServer(cfg.MCP[n]))
		if !ok {
			fmt.Fprintf(w, "  %s: not listed for its current configuration: `bulkhead mcp add %s` lists it\n", n, n)
			continue
		}
		what := "an MCP server"
		if sv := strings.TrimSpace(sum.Server + " " + sum.Version); sv != "" {
			what = termtext.OneLine(sv)
		}
		fmt.Fprintf(w, "  %s: %s, %d of its %d tools offered\n", n, what, sum.Offered, sum.Tools)
		printBeyondTools(w, "  ", sum)
	}
	fmt.Fprintf(w, "A server's own data (its XDG_DATA_HOME) is kept in %s, across its versions; its package runner's cache in %s. `bulkhead mcp rm NAME` offers to remove both.\n",
		config.ShortHome(filepath.Join(mcp.DataRoot(cfg.DataDir), "NAME")), config.ShortHome(filepath.Join(cfg.AppsCache(), "NAME")))
	return nil
}

// exists reports whether something is at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
