package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newPermissions is `bulkhead permissions`: the grants, the rules and the
// action log, from the command line.
func newPermissions(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions",
		Short: "List and revoke grants, and read the action log",
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Every stored grant (signature-checked) and every config rule",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, g, "permissions", func(cfg config.Config, c *serve.Client) error {
				return printSafely(cmd.OutOrStdout(), asJSON, func(w io.Writer) error { return printGrants(w, c, cfg, asJSON) })
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")

	var app string
	var all bool
	revoke := &cobra.Command{
		Use:   "revoke [ID]",
		Short: "Revoke a grant by id, every grant of an app (--app), or all (--all)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (app != "" || all) || (app != "" && all) {
				return &exitError{2, errors.New("give exactly one of: a grant ID, --app NAME, --all")}
			}
			return withClient(cmd, g, "permissions", func(cfg config.Config, c *serve.Client) error {
				var r permissions.Revoked
				var err error
				switch {
				case len(args) == 1:
					r, err = c.RevokeReport(args[0])
				case all:
					r, err = c.RevokeAllReport("")
				default:
					r, err = c.RevokeAllReport(app)
				}
				if err != nil {
					return err
				}
				switch {
				case r.N == 0 && all:
					fmt.Fprintln(cmd.OutOrStdout(), "nothing to revoke: no grants")
				case r.N == 0:
					fmt.Fprintf(cmd.OutOrStdout(), "nothing to revoke: %s has no grants\n", termtext.OneLine(app))
				case len(args) == 1:
					fmt.Fprintln(cmd.OutOrStdout(), "revoked"+permissions.StoppedWords(r.Stopped))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "revoked %d grant(s)%s\n", r.N, permissions.StoppedWords(r.Stopped))
				}
				return nil
			})
		},
	}
	revoke.Flags().StringVar(&app, "app", "", "revoke every grant this app asked for")
	revoke.Flags().BoolVar(&all, "all", false, "revoke every grant")

	var grep string
	var logJSON bool
	logCmd := &cobra.Command{
		Use:   "log",
		Short: "The action log: every request, its decision and who decided",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, g, "permissions", func(cfg config.Config, c *serve.Client) error {
				acts, err := c.Actions()
				if err != nil {
					return err
				}
				return printSafely(cmd.OutOrStdout(), logJSON, func(w io.Writer) error { return printActions(w, acts, grep, logJSON) })
			})
		},
	}
	logCmd.Flags().BoolVar(&logJSON, "json", false, "JSON Lines, one entry per line")
	logCmd.Flags().StringVar(&grep, "grep", "", "only entries containing this text")
	cmd.AddCommand(list, revoke, logCmd)
	return cmd
}

// printSafely runs print with a writer over w that shows control
// characters, escape sequences and invisible characters as visible
// escapes (as JSON escapes when asJSON): what these commands print holds
// app- and model-authored text, which must not act on the terminal.
func printSafely(w io.Writer, asJSON bool, print func(io.Writer) error) error {
	sw := termtext.NewWriter(w)
	if asJSON {
		sw = termtext.NewJSONWriter(w)
	}
	err := print(sw)
	if ferr := sw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func printGrants(w io.Writer, c *serve.Client, cfg config.Config, asJSON bool) error {
	grants := c.Grants()
	if asJSON {
		enc := json.NewEncoder(w)
		for _, gr := range grants {
			if err := enc.Encode(struct {
				permissions.Grant
				Invalid bool `json:"invalid,omitempty"`
			}{gr, gr.Invalid}); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSUBJECT → OBJECT\tFUNCTION\tANSWER\tSCOPE\tCREATED\tLAST USED\tUSES\tFROM")
	for _, gr := range grants {
		answer := "allow"
		if gr.Deny {
			answer = "deny"
		}
		if gr.Invalid {
			answer = "INVALID SIGNATURE (ignored)"
		}
		scope := "session"
		if gr.Permanent {
			scope = "permanent"
		}
		if c := caveatText(gr.Caveats); c != "" {
			scope += ", " + c
		}
		// One line per grant, one cell per field: a newline or tab in a
		// field is escaped, so it can neither forge a row nor a column.
		fmt.Fprintf(tw, "%s\t%s\t%s → %s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", cell(gr.ID), cell(string(gr.Kind)), cell(gr.Subject), cell(gr.Object), cell(gr.Function),
			answer, cell(scope), when(gr.Created), when(gr.LastUsed), gr.Uses, cell(gr.Origin))
	}
	if len(grants) == 0 {
		fmt.Fprintln(tw, "(no grants)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(cfg.Rules) > 0 {
		fmt.Fprintln(w, "\nRules:")
		for _, r := range cfg.Rules {
			fmt.Fprintf(w, "  %-5s kind=%s subject=%s object=%s function=%s   (%s)\n", r.Effect, or(r.Kind), or(r.Subject), or(r.Object), or(r.Function), r.Where)
		}
	}
	return nil
}

func caveatText(c permissions.Caveats) string {
	var parts []string
	if !c.Expires.IsZero() {
		parts = append(parts, "until "+c.Expires.Local().Format("2006-01-02 15:04"))
	}
	if c.UsesLeft > 0 {
		parts = append(parts, fmt.Sprintf("%d uses left", c.UsesLeft))
	}
	for k, v := range c.Args {
		parts = append(parts, fmt.Sprintf("%s=%s", k, v))
	}
	return strings.Join(parts, ", ")
}

func printActions(w io.Writer, acts []permissions.Entry, grep string, asJSON bool) error {
	enc := json.NewEncoder(w)
	for _, a := range acts {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if grep != "" && !strings.Contains(strings.ToLower(string(b)), strings.ToLower(grep)) {
			continue
		}
		if asJSON {
			if err := enc.Encode(a); err != nil {
				return err
			}
			continue
		}
		// One line per entry: a newline in a field is escaped, so it cannot
		// forge an entry of its own.
		if a.Note != nil {
			fmt.Fprintf(w, "%s  #%d  note %-12s %s: %s\n", when(a.Time), a.Seq, cell(a.Note.Kind), cell(a.Note.Subject), cell(a.Note.Detail))
			continue
		}
		r, d := a.Request, a.Decision
		verdict := "denied"
		if d.Allowed {
			verdict = "allowed " + string(d.Answer)
		}
		fmt.Fprintf(w, "%s  #%d  %-12s %s → %s %s %s — %s by %s\n", when(a.Time), a.Seq, cell(string(r.Kind)), cell(r.Subject), cell(r.Object), cell(r.Function),
			cell(string(r.Args)), cell(verdict), cell(string(d.Source)))
		if r.Warning != "" {
			// The warning may span lines; they stay indented under the entry.
			fmt.Fprintf(w, "      ⚠ %s\n", strings.ReplaceAll(termtext.Sanitize(r.Warning), "\n", "\n        "))
		}
	}
	return nil
}

// cell is a field of a line-per-item listing, on one line (termtext.OneLine).
func cell(s string) string { return termtext.OneLine(s) }

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func or(s string) string {
	if s == "" {
		return "*"
	}
	return s
}
