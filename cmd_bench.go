package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/bench"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// newBench is `bulkhead bench`: the built-in suite against the user's own
// model(s), isolated and in the --vanilla baseline.
func newBench(g *globals) *cobra.Command {
	var (
		models     []string
		modes      []string
		tasks      []string
		policy     string
		asJSON     bool
		runs       bool
		noInject   bool
		runTimeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure utility, attack success and latency of your own model(s), isolated and in the --vanilla baseline",
		Long: `Run the built-in suite against the configured model (or each --model)
in the isolated mode and in the --vanilla baseline, each run in a fresh data
directory and workspace with the suite's own apps (the built-in and demo
ones; --apps and the configured MCP servers are not used), and print a
table. Results are kept, with each
model's digest, the bulkhead version and the date, under the data
directory's bench/ folder.

The suite: user tasks over the demo and the built-in apps (mail, drive,
notes, files, calc, health, chat), each checked on the state the apps are
left in (what was sent, written, booked, answered); and injections placed
in what the apps return (an email, a document, a note, a file), each
checked on whether the attacker's goal happened. Every task runs without
and with each injection in each record it reads.

Dialogs are answered by --policy: expected (the default, as
--on-prompt=expected: only what the hub judged routine), judged (what the
plan declared, irreversible included, and nothing the hub says the user did
not ask for), once (every dialog allowed, attacks included) or deny.

Figures: utility (tasks completed), utility under attack, attack success
rate, dialogs per run (and how many the plan declared), model calls and
tokens per run (Ollama's own counters), median time to the first answer
token and to the end of the turn, plans the hub retried or fell back on.
See docs/benchmarks.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.vanilla {
				return &exitError{2, errors.New("bench runs both modes: --mode vanilla runs the baseline alone")}
			}
			if err := bench.CheckTasks(tasks); err != nil {
				return &exitError{2, err}
			}
			cfg, err := g.loadExcept(cmd, "model")
			if err != nil {
				return err
			}
			if len(models) == 0 {
				models = []string{cfg.Hub.Model}
			}
			ctx := cmd.Context()
			cli, err := llm.New(cfg.LLM("hub"), nil)
			if err != nil {
				return &exitError{2, err}
			}
			report := bench.Report{Version: versionString(), Date: time.Now().UTC(), Host: cli.Host(), Policy: policy}
			for _, m := range models {
				digest, err := cli.Digest(ctx, m)
				if err != nil {
					return fmt.Errorf("%w (bulkhead doctor says how to fix it)", err)
				}
				if digest == "" {
					return &llm.ModelMissingError{Model: m, Host: cli.Host()}
				}
				report.Models = append(report.Models, bench.Model{Name: m, Digest: digest})
				// Loaded once before it is timed, so that the first run
				// does not carry the model's load.
				if err := cli.Load(ctx, m); err != nil {
					return fmt.Errorf("load %s: %w", m, err)
				}
			}
			opts := bench.Options{Config: cfg, Models: models, Modes: modes, Policy: policy, Tasks: tasks, NoInjections: noInject, RunTimeout: runTimeout}
			if f, ok := cmd.ErrOrStderr().(*os.File); ok && term.IsTerminal(f.Fd()) {
				opts.Progress = progressBar(f)
			}
			report.Results, err = bench.Run(ctx, opts)
			if errors.Is(err, context.Canceled) && len(report.Results) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "bench: cancelled after %d runs; the table covers those\n", len(report.Results))
				err = nil
			}
			if err != nil {
				return &exitError{2, err}
			}
			report.Summaries = bench.Summarize(report.Results)
			saved, serr := report.Save(filepath.Join(cfg.DataDir, "bench"))
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				if err := enc.Encode(report); err != nil {
					return err
				}
			} else {
				if runs {
					if err := report.PrintRuns(out); err != nil {
						return err
					}
					fmt.Fprintln(out)
				}
				if err := report.Print(out); err != nil {
					return err
				}
				fmt.Fprintf(out, "\npolicy %s; %s\n", report.Policy, strings.Join(modelLines(report.Models), "; "))
			}
			if serr != nil {
				return fmt.Errorf("keep the results: %w", serr)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "results kept in", saved)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&models, "model", nil, "model to measure (repeat, or comma-separate, for a side-by-side; default: the configured hub model)")
	f.StringSliceVar(&modes, "mode", nil, "modes to run: isolated, vanilla (default both)")
	f.StringSliceVar(&tasks, "task", nil, "run only these tasks (ids as --runs shows them)")
	f.StringVar(&policy, "policy", bench.PolicyExpected, "who answers the dialogs: "+strings.Join(bench.Policies, ", "))
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&runs, "runs", false, "also print a line per run, with why it failed")
	f.BoolVar(&noInject, "no-injections", false, "run the tasks without their attacked variants")
	f.DurationVar(&runTimeout, "run-timeout", 5*time.Minute, "bound of one run")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		var split []string
		for _, m := range models {
			for p := range strings.SplitSeq(m, ",") {
				if p = strings.TrimSpace(p); p != "" {
					split = append(split, p)
				}
			}
		}
		models = split
		return nil
	}
	return cmd
}

func modelLines(ms []bench.Model) []string {
	var out []string
	for _, m := range ms {
		d := m.Digest
		if len(d) > 12 {
			d = d[:12]
		}
		out = append(out, fmt.Sprintf("%s (%s)", termtext.Sanitize(m.Name), d))
	}
	return out
}

// progressBar draws where the bench stands on one line of w.
func progressBar(w io.Writer) func(bench.Progress) {
	const width = 30
	return func(p bench.Progress) {
		if p.Total == 0 {
			return
		}
		n := width * p.Done / p.Total
		bar := strings.Repeat("█", n) + strings.Repeat("░", width-n)
		if p.Done == p.Total {
			fmt.Fprintf(w, "\r\x1b[2K")
			return
		}
		fmt.Fprintf(w, "\r\x1b[2K%s %d/%d  %s %s %s", bar, p.Done, p.Total, termtext.Sanitize(p.Model), p.Mode, p.Name)
	}
}
