package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// closeWait bounds how long a serving process waits for the store to
// close at its end.
const closeWait = time.Minute

// idleEnv overrides how long a serving process stays once unused.
const idleEnv = "BULKHEAD_SERVE_IDLE"

// serveEnv is added to the environment of a serving process this one
// starts (tests make their binary act as bulkhead).
var serveEnv []string

func newServe(g *globals) *cobra.Command {
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the data directory to every bulkhead on it (started on demand; exits when unused)",
		Long: `Serve the data directory: this process holds its database, grant key,
spokes and MCP servers, and every other bulkhead on it — the chat, ask,
permissions, memory, chats, doctor — is its client, over a socket in the
data directory (bulkhead.sock, the user's alone).

Any bulkhead command starts it when none serves the directory, so there
is no need to run it by hand; it exits once no client has been connected
for --idle (env ` + idleEnv + `). See docs/architecture.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Its children — apps' processes among them — read nothing of
			// it: not its memory, not its environment.
			if err := sandbox.NoDump(); err != nil {
				return fmt.Errorf("make the serving process undumpable: %w", err)
			}
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			if v := os.Getenv(idleEnv); v != "" && !cmd.Flags().Changed("idle") {
				if idle, err = time.ParseDuration(v); err != nil {
					return &exitError{2, fmt.Errorf("%s: %w", idleEnv, err)}
				}
			}
			eng, err := engine.Open(cmd.Context(), cfg, engine.Options{StartOllama: true, Vanilla: g.vanilla})
			if errors.Is(err, memory.ErrInUse) {
				// Another process holds it: the clients find that one.
				if st, qerr := serve.Query(cfg.DataDir); qerr == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "bulkhead serve: pid %d already serves %s\n", st.Pid, cfg.DataDir)
				}
				return nil
			}
			if err != nil {
				return err
			}
			// A config edit applies to the sessions that start after it
			// (engine.Apply), and ends what the old config granted apps
			// (folders, network, allow rules) before their next call. An
			// edit that does not load (or apply) cannot confirm the
			// network the file grants: the apps' network stops until
			// one does (engine.LoadFailed), which then applies even when
			// the file is as it was.
			file := cfg.File
			if file == "" {
				file = config.DefaultFile()
			}
			var mu sync.Mutex
			applied, failed := cfg, false
			reload := func() (map[string]string, error) {
				next, err := g.load(cmd)
				mu.Lock()
				defer mu.Unlock()
				if err == nil && (failed || serve.Fingerprint(next, g.vanilla) != serve.Fingerprint(applied, g.vanilla)) {
					if err = eng.Apply(next); err == nil {
						applied = engine.Applied(applied, next)
					}
				}
				if failed = err != nil; failed {
					eng.LoadFailed(err)
					return nil, fmt.Errorf("%w (the MCP apps have no network until it loads)", err)
				}
				return serve.Keys(applied, g.vanilla), nil
			}
			watch := func(changed func()) error { return engine.WatchConfig(cmd.Context(), file, changed) }
			err = serve.Serve(cmd.Context(), eng, serve.Options{Keys: serve.Keys(cfg, g.vanilla), ConfigFile: cfg.File,
				Reload: reload, Watch: watch, Version: versionString(), Idle: idle})
			if errors.Is(err, serve.ErrOrphaned) {
				// Its files are gone: nothing to close them into.
				return nil
			}
			// A store that cannot close (its disk gone, say) must not keep
			// the process alive for ever.
			closed := make(chan error, 1)
			go func() { closed <- eng.Close() }()
			select {
			case cerr := <-closed:
				if err == nil {
					err = cerr
				}
			case <-time.After(closeWait):
				eng.Log.Error("the data directory did not close in time; exiting anyway", "wait", closeWait.String())
				if err == nil {
					err = fmt.Errorf("the data directory %s did not close within %s", cfg.DataDir, closeWait)
				}
			}
			return err
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", serve.DefaultIdle, "exit once no client has been connected for this long")
	return cmd
}

// connect opens a session with the process serving cfg's data directory,
// starting one when none does. p answers this client's permission
// dialogs.
func (g *globals) connect(cmd *cobra.Command, cfg config.Config, kind string, p permissions.Prompter) (*serve.Client, error) {
	prof, models := serve.Session(cfg)
	return serve.Connect(cmd.Context(), serve.ConnectOptions{
		DataDir: cfg.DataDir, Fingerprint: serve.Fingerprint(cfg, g.vanilla), Keys: serve.Keys(cfg, g.vanilla), File: cfg.File, Version: versionString(),
		Kind: kind, Prompter: p, Start: g.starter(cmd, cfg), Profile: &prof, Models: models,
	})
}

// served opens a session with the serving process if there is one.
func (g *globals) served(cmd *cobra.Command, cfg config.Config, kind string) (*serve.Client, error) {
	prof, models := serve.Session(cfg)
	return serve.Connect(cmd.Context(), serve.ConnectOptions{
		DataDir: cfg.DataDir, Fingerprint: serve.Fingerprint(cfg, g.vanilla), Keys: serve.Keys(cfg, g.vanilla), File: cfg.File, Version: versionString(), Kind: kind,
		Profile: &prof, Models: models, Limited: true,
	})
}

// starter starts `bulkhead serve` for cfg's data directory with this
// command's configuration — the same config file and flags, the same
// environment and folder, the data directory and workspace as resolved
// here — detached from this process (its own session, no terminal), so
// that it outlives it.
func (g *globals) starter(cmd *cobra.Command, cfg config.Config) func() (<-chan error, error) {
	return func() (<-chan error, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		args := []string{"serve", "--data-dir", cfg.DataDir, "--workspace", cfg.Workspace}
		for _, name := range []string{"config", "ollama-host", "model", "apps"} {
			if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
				args = append(args, "--"+name, f.Value.String())
			}
		}
		if g.vanilla {
			args = append(args, "--vanilla")
		}
		errPath := filepath.Join(cfg.DataDir, "serve.err")
		errFile, err := os.OpenFile(errPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		defer errFile.Close()
		c := exec.Command(exe, args...)
		c.Env = append(os.Environ(), serveEnv...)
		c.Stderr = errFile
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() {
			err := c.Wait()
			if err != nil {
				// Its own message (a bad configuration, say), with its
				// exit status.
				b, _ := os.ReadFile(errPath)
				if msg := strings.TrimSpace(string(b)); msg != "" {
					err = errors.New(strings.TrimPrefix(msg, "bulkhead: "))
				} else {
					err = fmt.Errorf("bulkhead serve: %w", err)
				}
				if c.ProcessState.ExitCode() == 2 {
					err = &exitError{2, err}
				}
			}
			exited <- err
		}()
		return exited, nil
	}
}

// withClient runs fn with a session of the serving process (started if
// need be), for the commands that read and change the data directory.
func withClient(cmd *cobra.Command, g *globals, kind string, fn func(config.Config, *serve.Client) error) error {
	cfg, err := g.load(cmd)
	if err != nil {
		return err
	}
	prof, models := serve.Session(cfg)
	c, err := serve.Connect(cmd.Context(), serve.ConnectOptions{
		DataDir: cfg.DataDir, Fingerprint: serve.Fingerprint(cfg, g.vanilla), Keys: serve.Keys(cfg, g.vanilla), File: cfg.File, Version: versionString(),
		Kind: kind, Start: g.starter(cmd, cfg), Profile: &prof, Models: models,
		// A list or a log is never refused by a busy process of another
		// configuration; a change is, with why.
		Limited: true,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(cfg, c)
}

// servedDetail is doctor's line for a served data directory.
func servedDetail(ctx context.Context, c *serve.Client) (string, bool) {
	st, err := c.Status()
	if err != nil {
		return "", false
	}
	clients := "no other client"
	if n := len(st.Clients); n > 0 {
		clients = fmt.Sprintf("%d other client(s): %s", n, strings.Join(st.Clients, ", "))
	}
	dump := "not readable by its children"
	if st.Dumpable {
		dump = "DUMPABLE: its children could read its memory"
	}
	return fmt.Sprintf("served by bulkhead serve, pid %d (bulkhead %s, since %s, %s), %s, %d turn(s) running; it exits after %s unused", st.Pid, st.Version, st.Since, dump, clients, st.Turns, st.IdleExit), true
}
