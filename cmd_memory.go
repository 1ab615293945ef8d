package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newMemory is `bulkhead memory`: what the hub and each app remember.
func newMemory(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Show, export and forget what the hub and each app remember",
		Long: `Long-term memory: per owner (the hub, and each app's spoke) a summary of
each chat and the facts (entities) it noted. The hub's summary is built from
your own messages only; an app's from its own work, with instruction-like
text masked. Private chats and private queries leave nothing here.`,
	}
	var asJSON bool
	show := &cobra.Command{
		Use:   "show [APP|hub]",
		Short: "Summaries and facts of one owner, or of all",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return memoryClient(cmd, g, func(cfg config.Config, c *serve.Client) error {
				known, err := c.MemoryOwners()
				if err != nil {
					return err
				}
				owners := args
				if len(owners) == 0 {
					owners = known
				} else if ow := owners[0]; !memoryOwner(ow, known, c.Names()) {
					return &exitError{exitUsage, fmt.Errorf("no memory owner %q: bulkhead memory show lists whose memory there is (%s)", termtext.OneLine(ow), strings.Join(known, ", "))}
				}
				var all []hub.OwnerMemory
				for _, ow := range owners {
					m, err := c.Memory(ow)
					if err != nil {
						return &exitError{2, err}
					}
					all = append(all, m)
				}
				return printSafely(cmd.OutOrStdout(), asJSON, func(w io.Writer) error {
					if asJSON {
						return writeJSON(w, all)
					}
					for i, m := range all {
						if i > 0 {
							fmt.Fprintln(w)
						}
						printMemory(w, c, m)
					}
					return nil
				})
			})
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "JSON instead of text")

	forget := &cobra.Command{
		Use:   "forget APP|hub",
		Short: "Delete everything an app remembers (its whole namespace, its data included) and the hub's record of it; for hub, the hub's summaries, facts and records",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return memoryClient(cmd, g, func(cfg config.Config, c *serve.Client) error {
				owners, err := c.MemoryOwners()
				if err != nil {
					return err
				}
				if args[0] != "hub" && !slices.Contains(owners, args[0]) {
					return &exitError{exitUsage, fmt.Errorf("nothing is remembered of %q: bulkhead memory show lists whose memory there is (%s)", termtext.OneLine(args[0]), strings.Join(owners, ", "))}
				}
				if err := c.Forget(args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "forgot %s\n", termtext.OneLine(args[0]))
				return nil
			})
		},
	}

	export := &cobra.Command{
		Use:   "export",
		Short: "Every owner's memory as one JSON document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return memoryClient(cmd, g, func(cfg config.Config, c *serve.Client) error {
				all, err := c.ExportMemory()
				if err != nil {
					return err
				}
				return printSafely(cmd.OutOrStdout(), true, func(w io.Writer) error { return writeJSON(w, map[string]any{"owners": all}) })
			})
		},
	}
	cmd.AddCommand(show, forget, export)
	return cmd
}

// memoryOwner reports whether name can own memory: one that does
// (known), the hub, the plain chat's spoke, the --vanilla baseline's, or
// an installed app (apps), whose memory may be empty yet. Any other is a
// name that is not there.
func memoryOwner(name string, known, apps []string) bool {
	return slices.Contains(known, name) || slices.Contains(apps, name) ||
		name == "hub" || name == hub.VanillaApp || name == hub.MonolithApp
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printMemory writes one owner's memory as text, with chat titles. w
// must show control characters as visible escapes (printSafely): the
// summaries and facts hold app- and model-authored text.
func printMemory(w io.Writer, op chatReader, m hub.OwnerMemory) {
	fmt.Fprintln(w, cell(m.Owner))
	printLongTerm(w, op, "  ", m.Summaries, m.Entities)
	if r := m.Record; r != nil && (len(r.Summaries) > 0 || len(r.Entities) > 0) {
		fmt.Fprintln(w, "  the hub's record of it:")
		printLongTerm(w, op, "    ", r.Summaries, r.Entities)
	}
}

// chatReader reads a chat (for its title).
type chatReader interface {
	Chat(id string) (hub.Chat, error)
}

func printLongTerm(w io.Writer, op chatReader, indent string, sums []memory.Summary, es []memory.Entity) {
	if len(sums) == 0 && len(es) == 0 {
		fmt.Fprintln(w, indent+"(nothing remembered)")
		return
	}
	for _, s := range sums {
		title := s.Chat
		if c, err := op.Chat(s.Chat); err == nil && c.Title != "" {
			title = fmt.Sprintf("%s %q", s.Chat, c.Title)
		}
		fmt.Fprintf(w, "%ssummary of chat %s (%s, by %s):\n", indent, cell(title), when(s.Updated), cell(or(s.Model)))
		fmt.Fprintf(w, "%s  %s\n", indent, strings.ReplaceAll(s.Text, "\n", "\n"+indent+"  "))
	}
	if len(es) > 0 {
		fmt.Fprintln(w, indent+"facts:")
	}
	for _, e := range es {
		extra := e.Source
		if len(e.Labels) > 0 {
			extra += ", " + strings.Join(e.Labels, "+")
		}
		// One line per fact: a newline in a value cannot forge another.
		fmt.Fprintf(w, "%s  %s = %s   (%s, %s)\n", indent, cell(e.Key), cell(e.Value), cell(extra), when(e.Time))
	}
}

// memoryClient is withClient for the memory commands: they first wait
// (30 s at most) for the upkeep already due — an ask that just returned
// left its summary to the serving process — so that what they show
// includes it.
func memoryClient(cmd *cobra.Command, g *globals, fn func(config.Config, *serve.Client) error) error {
	return withClient(cmd, g, "memory", func(cfg config.Config, c *serve.Client) error {
		if err := c.WaitMemory(); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "bulkhead: memory updates still running:", termtext.Sanitize(err.Error()))
		}
		return fn(cfg, c)
	})
}
