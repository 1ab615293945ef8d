// Command bulkhead is a terminal assistant for local Ollama models in which
// every app runs isolated behind its own spoke. This file only wires flags
// and configuration to the packages that do the work.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/accessible"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/headless"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/datadir"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/serve"
	"github.com/bulkhead-dev/bulkhead/tui"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	sandbox.Launch() // started as an out-of-process app's launcher: run it and exit
	// No process of the user's — an app's among them — reads this one's
	// memory or environment (the serving key passes through every client).
	_ = sandbox.NoDump()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		os.Exit(report(err, os.Stderr, interrupted))
	}
}

// The exit statuses of every command (README, "Exit status").
const (
	exitOK = 0 // done: answered, listed, changed
	// exitFailed: it ran and failed or was refused — Ollama, a model, an
	// app, the disk, a request the turn needed denied by a rule or a
	// policy (headless.ErrRefused), a change set left pending.
	exitFailed = 1
	// exitUsage: bad flags or arguments, a configuration error, a name
	// that is not there (a chat, a grant, a model, an MCP server, a
	// memory owner).
	exitUsage       = 2
	exitInterrupted = 130
)

// report prints err (unless already printed) and returns the exit code
// (the constants above, and headless.ExitUnanswered). An error can carry
// an app's or a model's words, so control characters in it are shown as
// visible escapes (internal/termtext).
func report(err error, w io.Writer, interrupted bool) int {
	code := exitFailed
	var ee *exitError
	var un *headless.Unanswered
	switch {
	case interrupted:
		// Whatever it ended with, it ended because it was told to.
		code = exitInterrupted
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &un):
		code = headless.ExitUnanswered
	case usage(err):
		code = exitUsage
	}
	switch {
	case un != nil:
		// The turn's error was reported with it.
		fmt.Fprintln(w, "bulkhead:", un.Hint())
	case !errors.Is(err, headless.ErrFailed):
		fmt.Fprintln(w, "bulkhead:", termtext.Sanitize(err.Error()))
	}
	return code
}

// usage reports whether err is a mistake in what was asked: bad flags or
// arguments, the configuration (an app that cannot be installed, a data
// directory that is not safely the user's, one in use under another
// configuration), or a name that is not there (a chat, a grant, a model
// the server does not have, whether /model, a flag or the config named
// it).
func usage(err error) bool {
	for _, e := range []error{config.ErrInvalid, engine.ErrApps, datadir.ErrUnsafe, headless.ErrUsage,
		serve.ErrInUse, hub.ErrNoChat, permissions.ErrUnknownGrant, engine.ErrNotInstalled} {
		if errors.Is(err, e) {
			return true
		}
	}
	var missing *llm.ModelMissingError
	return errors.As(err, &missing)
}

// vanillaWarning is the first line `ask --vanilla` writes (to stderr).
const vanillaWarning = "bulkhead: --vanilla is the UNSAFE baseline for comparison: one model context with every app and one memory, nothing isolated, nothing asked (its calls are still in `bulkhead permissions log`)"

// extraCommands are added to the root command (the binary's tests add a
// scripted client of the serving process).
var extraCommands []func(*globals) *cobra.Command

type globals struct {
	configFile, ollamaHost, model, dataDir string
	vanilla                                bool
	// configured are the hub's and the spokes' models as configured,
	// before a remembered /model choice (load).
	configured [2]string
}

func newRoot() *cobra.Command {
	g := &globals{}
	var private, cont, accessibleMode bool
	var resume string
	root := &cobra.Command{
		Use:   "bulkhead",
		Short: "A terminal assistant for local Ollama models, with every app isolated",
		Long: `bulkhead talks to local Ollama models. A deterministic hub plans each
request with its own model and runs every app in its own spoke, with its own
model client and memory; cross-app flows and irreversible actions are put to
you first.

Run without a command to open the chat.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			if accessibleMode || cfg.Accessible {
				return runAccessible(cmd, g, cfg, resume, cont, private)
			}
			p := tui.NewPrompter()
			// The chat is a client of the process serving the data
			// directory, started if need be; Ollama's own state (the
			// setup panel, pulls) is asked here.
			cli, err := g.connect(cmd, cfg, "tui", p)
			if err != nil {
				return err
			}
			defer cli.Close()
			if resume, err = resumeOf(cli, cfg.Workspace, resume, cont); err != nil {
				return err
			}
			ollama, err := llm.New(cfg.LLM("hub"), nil)
			if err != nil {
				return &exitError{2, err}
			}
			opts := tui.Options{
				Backend:    cli,
				Ollama:     ollama,
				SpokeModel: cfg.Spokes.Model,
				Theme:      cfg.Theme,
				Mouse:      cfg.Mouse,
				Version:    versionString(),
				ResumeChat: resume,
				Private:    private,
				Prompter:   p,
				Vanilla:    g.vanilla,
				Broker:     cli,
				Changes:    cli,
				DataDir:    cfg.DataDir,
				Workspace:  cfg.Workspace,
				Registry:   cli,
				Sandbox:    cli.SandboxReport,
				// An app's own model, if the config gives it one — apps.NAME
				// before mcp.NAME, as config.LLM reads them — and the key
				// that gives it; the others follow the spokes' (and /model).
				AppModel:    func(app string) string { m, _ := cfg.AppModel(app); return m },
				AppModelKey: func(app string) string { _, k := cfg.AppModel(app); return k },
				AppSource:   map[string]string{},
				Apps:        cli,
				Models:      remembering{cli, cfg.DataDir, g.configured},
				// The first screen: Ollama and the models checked, and
				// what fails shown with its fix until it works.
				Setup: &tui.Setup{Host: ollama.Host(), HostFrom: cfg.From["ollama.host"], ConfigFile: cfg.File},
			}
			if cfg.File == "" {
				opts.Setup.ConfigFile = config.DefaultFile()
			}
			for _, r := range cfg.Rules {
				opts.Rules = append(opts.Rules, tui.RuleView{Effect: r.Effect, Kind: r.Kind, Subject: r.Subject, Object: r.Object, Function: r.Function, Where: r.Where})
			}
			for name, s := range cfg.MCP {
				opts.AppSource[name] = s.URL
				if s.URL == "" {
					opts.AppSource[name] = strings.Join(append([]string{s.Command}, s.Args...), " ")
				}
			}
			err = tui.Run(cmd.Context(), opts)
			if errors.Is(err, context.Canceled) && cmd.Context().Err() != nil {
				return nil // SIGTERM or SIGINT: a quit, as ctrl+c is
			}
			return err
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.configFile, "config", "", "config file (default "+config.DefaultFile()+")")
	pf.StringVar(&g.ollamaHost, "ollama-host", "", "Ollama server URL (config ollama.host, env OLLAMA_HOST)")
	pf.StringVar(&g.model, "model", "", "model for the hub and the spokes (config hub.model, spokes.model); an app with a model of its own (apps.NAME.model, mcp.NAME.model) keeps it")
	pf.StringVar(&g.dataDir, "data-dir", "", "where chats and memory live (default "+config.DefaultDataDir()+")")
	pf.String("apps", "", "apps to enable, comma-separated names or packs: builtin, demo (config enable)")
	pf.String("workspace", "", "folder the files and shell apps work in (default: the current folder)")
	pf.BoolVar(&g.vanilla, "vanilla", false, "UNSAFE baseline for comparison: one context with every app, one memory, no dialogs")
	root.Flags().BoolVar(&private, "private", false, "start in a private chat: nothing of it is written to disk")
	root.Flags().StringVar(&resume, "chat", "", "resume the chat with this id")
	root.Flags().BoolVarP(&cont, "continue", "c", false, "resume the chat used last")
	root.Flags().BoolVar(&accessibleMode, "accessible", false, "line-mode chat for screen readers: no full-screen drawing, dialogs as numbered prompts (config ui.accessible)")
	root.MarkFlagsMutuallyExclusive("chat", "continue")
	root.MarkFlagsMutuallyExclusive("private", "continue")
	root.AddCommand(newAsk(g), newDoctor(g), newVersion(), newPermissions(g), newMemory(g), newChats(g), newServe(g), newBench(g), newMCP(g), newChanges(g))
	for _, c := range extraCommands {
		root.AddCommand(c(g))
	}
	usageExits2(root)
	return root
}

// usageExits2 makes bad usage — an unknown flag, missing or extra
// arguments — exit with status 2 in every command.
func usageExits2(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{2, err} })
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return &exitError{2, err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageExits2(sub)
	}
}

// resumeOf is the chat to open: resume, else with --continue the one
// used last ("" for a new chat).
func resumeOf(cli *serve.Client, folder, resume string, cont bool) (string, error) {
	if cont && resume == "" {
		return lastChat(cli, folder)
	}
	return resume, nil
}

// lastChat is the id of the chat of folder with the latest activity (""
// for none: a new chat opens). Chats belong to the folder they were
// started in: --continue in another folder never resumes one of them.
func lastChat(cli *serve.Client, folder string) (string, error) {
	cs, err := cli.Chats()
	if err != nil {
		return "", err
	}
	id, at := "", time.Time{}
	for _, c := range cs {
		if !c.Private && c.Folder == folder && c.Updated.After(at) {
			id, at = c.ID, c.Updated
		}
	}
	return id, nil
}

// load reads the configuration; a bad one is exit code 2. The model
// /model chose last stands in for the configured ones while they are what
// it was chosen over (serve.Remembered).
func (g *globals) load(cmd *cobra.Command) (config.Config, error) {
	cfg, err := g.loadExcept(cmd)
	if err != nil {
		return cfg, err
	}
	g.configured = [2]string{cfg.Hub.Model, cfg.Spokes.Model}
	serve.Remembered(&cfg)
	return cfg, nil
}

// remembering is a client whose /model choice is remembered for the
// bulkheads started later (serve.Remember).
type remembering struct {
	*serve.Client
	dataDir string
	over    [2]string
}

func (r remembering) SetModel(ctx context.Context, name string) error {
	if err := r.Client.SetModel(ctx, name); err != nil {
		return err
	}
	// A choice not remembered is still this session's.
	_ = serve.Remember(r.dataDir, name, r.over)
	return nil
}

// loadExcept is load without binding the named flags: a command's own
// flag of that name (bench's --model, which takes several) is its own.
func (g *globals) loadExcept(cmd *cobra.Command, skip ...string) (config.Config, error) {
	src, err := config.Open(g.configFile)
	if err != nil {
		return config.Config{}, &exitError{2, err}
	}
	pf := cmd.Flags()
	for key, flag := range map[string]string{"ollama.host": "ollama-host", "hub.model": "model", "spokes.model": "model", "data_dir": "data-dir", "enable": "apps", "workspace": "workspace"} {
		if f := pf.Lookup(flag); f != nil && f.Changed && !slices.Contains(skip, flag) {
			if err := src.BindFlag(key, f); err != nil {
				return config.Config{}, &exitError{2, err}
			}
		}
	}
	cfg, err := src.Load()
	if err == nil {
		err = engine.CheckEnable(cfg)
	}
	if err != nil {
		return config.Config{}, &exitError{2, err}
	}
	return cfg, nil
}

func newAsk(g *globals) *cobra.Command {
	var opts headless.Options
	var onPrompt string
	cmd := &cobra.Command{
		Use:   "ask [flags] QUERY...",
		Short: "Ask one question without the TUI (reads standard input when QUERY is -)",
		Long: `Ask one question without the TUI and print the answer.

With --json, print one JSON object per line: plan, token (with --stream),
permission, decision, app_call, app_result, results, answer {text, usage},
error {message}. See docs/events.md.
Exit status: 0 answered; 1 the request failed, or a request it needed was
denied by a rule or a policy (the answer says what did not run), or a
change set was left pending; 2 bad flags, configuration or a name that is
not there (a chat, a model); 3 a dialog needed an answer and none could be
given: nothing was done past it, and the turn is kept for --retry with the
--on-prompt policy the message names; 130 interrupted.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Retry {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.Join(args, " ")
			if query == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				query = string(b)
			}
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			prompter, err := headless.OnPrompt(onPrompt)
			if err != nil {
				return &exitError{2, err}
			}
			if g.vanilla {
				fmt.Fprintln(cmd.ErrOrStderr(), vanillaWarning)
			}
			cli, err := g.connect(cmd, cfg, "ask", prompter)
			if err != nil {
				return err
			}
			defer cli.Close()
			opts.Unavailable = cli.OllamaErr()
			if f, ok := cmd.OutOrStdout().(*os.File); ok && opts.Stream && !opts.JSON && term.IsTerminal(f.Fd()) {
				// A person reads it: a draft may be shown, and taken back.
				if w, h, err := term.GetSize(f.Fd()); err == nil {
					opts.Terminal = headless.TermSize{Cols: w, Rows: h}
				}
			}
			// The memory upkeep this turn brought due runs in the serving
			// process after the answer: ask exits with its answer (a
			// reader of memory waits for what is due; the serving process
			// finishes it before it exits).
			return headless.Run(cmd.Context(), cli, query, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print one JSON event per line (docs/events.md)")
	f.BoolVar(&opts.Stream, "stream", false, "print the answer as it arrives; on a terminal, the plain model's draft too, taken back from the screen if the plan needs apps (on a pipe, nothing before the plan)")
	f.BoolVar(&opts.Private, "private", false, "private: nothing of this request is written to disk")
	f.StringVar(&opts.Chat, "chat", "", "continue the chat with this id")
	f.BoolVar(&opts.Retry, "retry", false, "run the last turn of --chat again if it did not finish")
	f.StringVar(&onPrompt, "on-prompt", "", "answer permission dialogs: expected (allow only what the hub judged routine: expected, reversible, no concern; deny the rest — the policy for scripts), judged (what the plan declared, irreversible included, and nothing the hub warned of — the policy bulkhead bench measures), deny, or once / session (allow EVERY dialog, attacks included; irreversible actions once at most); without it a dialog fails the run")
	return cmd
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bulkhead's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "bulkhead", versionString())
		},
	}
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// runAccessible is the chat in line mode (package accessible): requests
// read a line at a time from standard input, answers and dialogs written
// as plain text, each dialog a huh form in accessible mode.
func runAccessible(cmd *cobra.Command, g *globals, cfg config.Config, resume string, cont, private bool) error {
	lines := accessible.NewLines(cmd.InOrStdin())
	out := cmd.OutOrStdout()
	p := accessible.NewPrompter(lines, out)
	if g.vanilla {
		fmt.Fprintln(cmd.ErrOrStderr(), vanillaWarning)
	}
	cli, err := g.connect(cmd, cfg, "accessible", p)
	if err != nil {
		return err
	}
	defer cli.Close()
	if resume, err = resumeOf(cli, cfg.Workspace, resume, cont); err != nil {
		return err
	}
	if oerr := cli.OllamaErr(); oerr != nil {
		fmt.Fprintln(out, "Ollama cannot be used:", termtext.Sanitize(oerr.Error()))
		fmt.Fprintln(out, "Run bulkhead doctor to see what fails and how to fix it.")
		return &exitError{1, oerr}
	}
	ollama, err := llm.New(cfg.LLM("hub"), nil)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	err = accessible.Run(cmd.Context(), remembering{cli, cfg.DataDir, g.configured}, lines, out, accessible.Options{Chat: resume, Private: private, Ollama: ollama})
	if errors.Is(err, context.Canceled) && cmd.Context().Err() != nil {
		err = nil
	}
	return err
}
