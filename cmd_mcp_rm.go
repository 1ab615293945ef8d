package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/mcpconfig"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newMCPRm is `bulkhead mcp rm`: a server out of the config, and what it
// leaves behind — its own data, its caches, its memory — removed once
// the person says so (or --purge), else kept and named.
func newMCPRm(g *globals) *cobra.Command {
	var purge, keep bool
	rm := &cobra.Command{
		Use:   "rm NAME [--purge | --keep]",
		Short: "Remove an MCP server from the config (and from enable), and offer to remove its data, caches and memory",
		Long: `Remove an MCP server from the config file (mcp.NAME, and NAME in
enable), then name what it leaves behind — its own data folder, its
package runner's cache and its cached tool list, what it and the hub
remember of it — and ask, on the terminal, whether to remove them too.
--purge removes them without asking, --keep keeps them; off a terminal,
without either, they are kept, and the message names --purge. Run
again once the server is out of the config, it offers what is left.
Its permanent grants and its entries in the action log are kept
(bulkhead permissions revoke --app NAME revokes the grants).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if purge && keep {
				return &exitError{exitUsage, errors.New("--purge and --keep: give one")}
			}
			if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
				return &exitError{exitUsage, fmt.Errorf("%q is not a server's name", name)}
			}
			path := configPath(g)
			removed, err := mcpconfig.Remove(path, name)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			out := cmd.OutOrStdout()
			if removed {
				fmt.Fprintf(out, "removed mcp.%s from %s\n", name, path)
			}
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			left := leftFiles(cfg, name)
			if !removed && len(left) == 0 {
				return &exitError{exitUsage, fmt.Errorf("no MCP server %q in %s, and nothing of one left behind", name, path)}
			}
			ask := newPrompt(cmd)
			defer ask.close()
			if !purge && (keep || !ask.tty) {
				describe(out, name, left)
				why := " (--keep)"
				if !keep {
					why = fmt.Sprintf(" (not asked, since standard input is not a terminal: `bulkhead mcp rm %s --purge` removes them all)", name)
				}
				return leave(out, name, left, false, why)
			}
			// What it remembers is the serving process's to read and
			// forget.
			prof, models := serve.Session(cfg)
			cli, err := serve.Connect(cmd.Context(), serve.ConnectOptions{
				DataDir: cfg.DataDir, Fingerprint: serve.Fingerprint(cfg, g.vanilla), Keys: serve.Keys(cfg, g.vanilla), File: cfg.File, Version: versionString(),
				Kind: "mcp", Start: g.starter(cmd, cfg), Profile: &prof, Models: models, Limited: true,
			})
			memory := err == nil
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "bulkhead: what %s remembers could not be read: %s\n", name, termtext.Sanitize(err.Error()))
			} else {
				defer cli.Close()
				if m, ok := leftMemory(cli, name); ok {
					left = append(left, m)
				}
			}
			if len(left) == 0 {
				return leave(out, name, nil, memory, "")
			}
			describe(out, name, left)
			if !purge && !ask.yes(fmt.Sprintf("Remove %s's %s too? [y/N] ", name, listed(left))) {
				return leave(out, name, left, memory, "")
			}
			var errs []error
			for _, l := range left {
				if err := l.remove(); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", l.what, err))
					continue
				}
				fmt.Fprintf(out, "removed its %s\n", l.what)
			}
			if len(errs) > 0 {
				return &exitError{exitFailed, errors.Join(errs...)}
			}
			fmt.Fprintf(out, "kept: its grants (bulkhead permissions revoke --app %s) and its entries in the action log\n", name)
			return nil
		},
	}
	rm.Flags().BoolVar(&purge, "purge", false, "remove its data, caches and memory too, without asking")
	rm.Flags().BoolVar(&keep, "keep", false, "keep its data, caches and memory, without asking")
	return rm
}

// leftover is one thing a server leaves behind once out of the config.
type leftover struct {
	// what it is ("data", "package runner's cache", …) and where, as
	// shown; alone is how to remove it by itself.
	what, where, alone string
	remove             func() error
}

// leftFiles are the files a server leaves behind in bulkhead's folders:
// its own data folder (mcp.DataFolder), its package runner's cache and
// its cached tool list — those that are there.
func leftFiles(cfg config.Config, name string) []leftover {
	var out []leftover
	if d := mcp.DataFolder(cfg.DataDir, name); exists(d) {
		out = append(out, leftover{what: "data", where: config.ShortHome(d) + " (" + size(d) + ")", alone: "rm -r " + d, remove: func() error { return removeTree(d) }})
	}
	if cfg.CacheDir != "" {
		if d := filepath.Join(cfg.AppsCache(), name); exists(d) {
			out = append(out, leftover{what: "package runner's cache", where: config.ShortHome(d) + " (" + size(d) + ")", alone: "rm -r " + d, remove: func() error { return removeTree(d) }})
		}
	}
	cache := engine.MCPCache(cfg.DataDir)
	if f := filepath.Join(cache.Dir(), name+".json"); exists(f) {
		out = append(out, leftover{what: "cached tool list", where: config.ShortHome(f), alone: "rm " + f, remove: func() error {
			cache.Forget(name)
			if exists(f) {
				return fmt.Errorf("%s is still there", f)
			}
			return nil
		}})
	}
	return out
}

// leftMemory is what the hub and the app's spoke remember of name, as
// the serving process says, if anything.
func leftMemory(cli *serve.Client, name string) (leftover, bool) {
	_ = cli.WaitMemory() // an upkeep already due would write after the forget
	owners, err := cli.MemoryOwners()
	if err != nil || !slices.Contains(owners, name) {
		return leftover{}, false
	}
	where := "what it and the hub remember of it"
	if m, err := cli.Memory(name); err == nil {
		sums, facts := len(m.Summaries), len(m.Entities)
		if r := m.Record; r != nil {
			sums, facts = sums+len(r.Summaries), facts+len(r.Entities)
		}
		where = fmt.Sprintf("%d summaries and %d facts, its own and the hub's record of it", sums, facts)
	}
	return leftover{what: "memory", where: where, alone: "bulkhead memory forget " + name, remove: func() error { return cli.Forget(name) }}, true
}

// describe names what a server leaves behind, one line each.
func describe(w io.Writer, name string, left []leftover) {
	if len(left) == 0 {
		return
	}
	fmt.Fprintf(w, "%s leaves behind:\n", name)
	for _, l := range left {
		fmt.Fprintf(w, "  its %s: %s\n", l.what, termtext.OneLine(l.where))
	}
}

// listed names the kinds of leftovers in a phrase ("data, package
// runner's cache and memory").
func listed(left []leftover) string {
	var ws []string
	for _, l := range left {
		ws = append(ws, l.what)
	}
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// leave says that what a server left behind is kept, and how to remove
// each alone; why is why ("" once the person was asked and said no, or
// when there is nothing). Its memory, when the serving process was not
// asked (memory false), is named as what may be left.
func leave(w io.Writer, name string, left []leftover, memory bool, why string) error {
	switch {
	case len(left) == 0 && memory:
		fmt.Fprintf(w, "%s left nothing behind\n", name)
	case len(left) > 0:
		fmt.Fprintf(w, "kept%s; each is removed alone by:\n", why)
		for _, l := range left {
			fmt.Fprintf(w, "  its %s: %s\n", l.what, termtext.OneLine(l.alone))
		}
	}
	if !memory {
		fmt.Fprintf(w, "what it and the hub remember of it, if anything, is kept: bulkhead memory forget %s forgets it\n", name)
	}
	fmt.Fprintf(w, "kept: its grants (bulkhead permissions revoke --app %s) and its entries in the action log\n", name)
	return nil
}

// size is the bytes of the files under dir, in words ("12 KiB").
func size(dir string) string {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// removeTree removes dir and everything in it, following no link. A
// folder its app made unwritable (or unreadable) is made the user's
// (0700) first — through the folder as opened, never through a link.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			fd, oerr := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if oerr == nil {
				_ = os.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), 0o700)
				unix.Close(fd)
			}
		}
		return nil
	})
	return os.RemoveAll(dir)
}
