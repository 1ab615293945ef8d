package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newChanges is `bulkhead changes`: the change sets apps wrote into
// folders they share with you that wait for your answer (a crash, a
// restart, `ask --on-prompt=…`, a dialog answered "later"): list them,
// read one with its diffs, accept it (or some of it), or discard it.
func newChanges(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "changes",
		Short: "Change sets apps wrote in your folders that wait for your answer: list, show, accept, discard",
		Args:  cobra.NoArgs,
	}
	var asJSON bool
	list := func(cmd *cobra.Command, _ []string) error {
		return withClient(cmd, g, "changes", func(_ config.Config, c *serve.Client) error {
			sets, err := c.Changes()
			if err != nil {
				return err
			}
			return printSafely(cmd.OutOrStdout(), asJSON, func(w io.Writer) error {
				if asJSON {
					enc := json.NewEncoder(w)
					for _, s := range sets {
						if err := enc.Encode(s); err != nil {
							return err
						}
					}
					return nil
				}
				if len(sets) == 0 {
					_, err := fmt.Fprintln(w, "no change sets wait for you")
					return err
				}
				tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tAPP\tFOLDER\tCHANGES\t")
				for _, s := range sets {
					what := s.Count
					if s.Err != "" {
						what = "unreadable: " + s.Err
					}
					var notes []string
					if s.Warned {
						notes = append(notes, "⚠ warned")
					}
					if s.Running {
						notes = append(notes, "its process runs")
					}
					if s.Private {
						notes = append(notes, "private")
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.App, s.Folder, what, strings.Join(notes, ", "))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				_, err := fmt.Fprintln(w, "\nbulkhead changes show ID · accept ID [--only N,M] · discard ID")
				return err
			})
		})
	}
	cmd.RunE = list
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	// `changes list` is `changes`, as the other commands that list say it.
	listCmd := &cobra.Command{Use: "list", Short: "List the change sets that wait for your answer (as bulkhead changes)", Args: cobra.NoArgs, RunE: list}
	listCmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.AddCommand(listCmd)

	var showJSON bool
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Every entry of a change set, numbered, with the hub's warnings and each text file's diff",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withClient(cmd, g, "changes", func(_ config.Config, c *serve.Client) error {
				r, err := c.ChangeSet(args[0])
				if err != nil {
					return notThere(err)
				}
				return printSafely(cmd.OutOrStdout(), showJSON, func(w io.Writer) error {
					if showJSON {
						return json.NewEncoder(w).Encode(r.Changes)
					}
					return printChangeSet(w, r)
				})
			})
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "the set as one JSON object")

	var only string
	accept := &cobra.Command{
		Use:   "accept ID",
		Short: "Apply a change set to its folder (all of it, or the entries --only numbers); the rest is discarded",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var picks []int
			if only != "" {
				picks = []int{}
				for _, f := range strings.FieldsFunc(only, func(r rune) bool { return r == ',' || r == ' ' }) {
					n, err := strconv.Atoi(f)
					if err != nil || n < 1 {
						return &exitError{exitUsage, fmt.Errorf("--only %q: want the entries' numbers, as show numbers them (1,3,4)", only)}
					}
					picks = append(picks, n-1)
				}
			}
			return withClient(cmd, g, "changes", func(_ config.Config, c *serve.Client) error {
				out, err := c.DecideChanges(args[0], true, picks)
				if err != nil {
					return notThere(err)
				}
				return printSafely(cmd.OutOrStdout(), false, func(w io.Writer) error {
					fmt.Fprintf(w, "applied %d entries\n", len(out.Applied))
					for _, p := range out.Applied {
						fmt.Fprintf(w, "  %s\n", p)
					}
					if len(out.Failed) > 0 {
						fmt.Fprintf(w, "not applied, still pending (%d):\n", len(out.Failed))
						for p, why := range out.Failed {
							fmt.Fprintf(w, "  %s: %s\n", p, why)
						}
					}
					return nil
				})
			})
		},
	}
	accept.Flags().StringVar(&only, "only", "", "accept only these entries (their numbers in show), discard the rest")

	discard := &cobra.Command{
		Use:   "discard ID",
		Short: "Drop a change set whole: nothing of it reaches the folder",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withClient(cmd, g, "changes", func(_ config.Config, c *serve.Client) error {
				if _, err := c.DecideChanges(args[0], false, nil); err != nil {
					return notThere(err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), "discarded")
				return nil
			})
		},
	}
	cmd.AddCommand(show, accept, discard)
	return cmd
}

// notThere makes "no such change set" a usage error (exit 2).
func notThere(err error) error {
	if strings.Contains(err.Error(), "no such change set") {
		return &exitError{exitUsage, err}
	}
	return err
}

// printChangeSet prints a set as its dialog says it: the hub's words,
// then each entry numbered with its warnings and diff.
func printChangeSet(w io.Writer, r permissions.Request) error {
	set := r.Changes
	if set == nil {
		return errors.New("the serving process sent no change set")
	}
	fmt.Fprintf(w, "%s · %s wrote in %s: %s\n", set.ID, r.Subject, set.Folder, set.Count())
	if set.Running {
		fmt.Fprintln(w, "its process still runs, and may write more")
	}
	fmt.Fprintf(w, "⚠ %s\n\n", r.Warning)
	for i, e := range set.Entries {
		mark := " "
		if len(e.Warnings) > 0 || e.Conflict != "" {
			mark = "⚠"
		}
		fmt.Fprintf(w, "%s %3d. %s\n", mark, i+1, e.Words())
		for _, wr := range e.Warnings {
			fmt.Fprintf(w, "        ⚠ %s\n", wr)
		}
		if e.Conflict != "" {
			fmt.Fprintf(w, "        ⚠ %s\n", e.Conflict)
		}
		if e.Never != "" {
			fmt.Fprintf(w, "        not applied: %s\n", e.Never)
		}
		if d := e.Diff; d != nil {
			if d.Unshown != "" {
				fmt.Fprintf(w, "        %s\n", d.Unshown)
			}
			for _, l := range d.Lines {
				op := map[string]string{"-": "-", "+": "+", "@": "@@", " ": " "}[l.Op]
				fmt.Fprintf(w, "        %s %s\n", op, l.Text)
			}
			if d.More > 0 {
				fmt.Fprintf(w, "        … %d more lines\n", d.More)
			}
		}
	}
	if set.More > 0 {
		fmt.Fprintf(w, "\n%d more entries not listed: accept what is listed, then show it again\n", set.More)
	}
	return nil
}
