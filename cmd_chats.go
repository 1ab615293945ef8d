package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newChats is `bulkhead chats`: the kept chats, from the command line.
func newChats(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chats",
		Short: "List, show, export and delete the chats kept in the data directory",
		Long: `The chats bulkhead keeps (private chats are never kept). Every id is
the one ` + "`bulkhead --chat ID`" + ` and ` + "`ask --chat ID`" + ` take.`,
	}
	var asJSON, here bool
	var folder string
	list := &cobra.Command{
		Use:   "list",
		Short: "Every kept chat, most recently used first: id, last use, turns, title, folder",
		Long: `Every kept chat, most recently used first: its id, last use, turns,
title and the folder it was started in. --here lists this folder's chats
(those bulkhead --continue picks from), --folder DIR another's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, g, "chats", func(cfg config.Config, c *serve.Client) error {
				chats, err := c.Chats()
				if err != nil {
					return err
				}
				only := ""
				switch {
				case here && folder != "":
					return &exitError{exitUsage, errors.New("--here and --folder: give one")}
				case here:
					only = cfg.Workspace
				case folder != "":
					abs, err := filepath.Abs(config.ExpandHome(folder))
					if err != nil {
						return &exitError{exitUsage, fmt.Errorf("--folder %s: %w", folder, err)}
					}
					only = abs
				}
				type row struct {
					ID      string    `json:"id"`
					Title   string    `json:"title"`
					Folder  string    `json:"folder,omitempty"`
					Updated time.Time `json:"updated"`
					Turns   uint64    `json:"turns"`
				}
				var rows []row
				for _, ch := range chats {
					if ch.Private || only != "" && ch.Folder != only {
						continue
					}
					last, _, err := c.TurnsBefore(ch.ID, 0, 1)
					if err != nil {
						return err
					}
					var n uint64
					if len(last) > 0 {
						n = last[0].Seq
					}
					rows = append(rows, row{ch.ID, ch.Title, ch.Folder, ch.Updated, n})
				}
				return printSafely(cmd.OutOrStdout(), asJSON, func(w io.Writer) error {
					if asJSON {
						return writeJSON(w, rows)
					}
					if len(rows) == 0 && only != "" {
						fmt.Fprintf(w, "no chats kept in %s\n", termtext.OneLine(only))
					} else if len(rows) == 0 {
						fmt.Fprintln(w, "no chats kept yet")
					}
					for _, r := range rows {
						unit := "turns"
						if r.Turns == 1 {
							unit = "turn "
						}
						in := "(folder not recorded)"
						if r.Folder != "" {
							in = "in " + config.ShortHome(r.Folder)
						}
						fmt.Fprintf(w, "%s  %s  %4d %s  %s  %s\n", r.ID, r.Updated.Local().Format("2006-01-02 15:04"), r.Turns, unit, termtext.OneLine(r.Title), termtext.OneLine(in))
					}
					return nil
				})
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "JSON instead of text")
	list.Flags().BoolVar(&here, "here", false, "only the chats started in this folder (--workspace)")
	list.Flags().StringVar(&folder, "folder", "", "only the chats started in this folder")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Every turn of a chat: your words, the answer, and how each ended",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withChat(cmd, g, args[0], func(c hub.Chat, turns []hub.Turn) error {
				return printSafely(cmd.OutOrStdout(), false, func(w io.Writer) error {
					return writeMarkdown(w, c, turns)
				})
			})
		},
	}

	var format string
	export := &cobra.Command{
		Use:   "export ID",
		Short: "A chat as Markdown (--format md, the default) or JSON (--format json)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "md" && format != "json" {
				return &exitError{2, fmt.Errorf("--format %q: want md or json", format)}
			}
			return withChat(cmd, g, args[0], func(c hub.Chat, turns []hub.Turn) error {
				return printSafely(cmd.OutOrStdout(), format == "json", func(w io.Writer) error {
					if format == "json" {
						return writeJSON(w, exportOf(c, turns))
					}
					return writeMarkdown(w, c, turns)
				})
			})
		},
	}
	export.Flags().StringVar(&format, "format", "md", "md or json")

	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a chat: its turns, and what every app remembers of it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withClient(cmd, g, "chats", func(cfg config.Config, c *serve.Client) error {
				if _, err := c.Chat(args[0]); err != nil {
					return &exitError{2, fmt.Errorf("no chat %s (bulkhead chats list shows them)", termtext.OneLine(args[0]))}
				}
				if err := c.DeleteChat(args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted chat %s\n", termtext.OneLine(args[0]))
				return nil
			})
		},
	}
	cmd.AddCommand(list, show, export, rm)
	return cmd
}

// withChat reads one chat with every turn.
func withChat(cmd *cobra.Command, g *globals, id string, fn func(hub.Chat, []hub.Turn) error) error {
	return withClient(cmd, g, "chats", func(cfg config.Config, c *serve.Client) error {
		ch, err := c.Chat(id)
		if err != nil {
			return &exitError{2, fmt.Errorf("no chat %s (bulkhead chats list shows them)", termtext.OneLine(id))}
		}
		turns, err := c.Turns(id)
		if err != nil {
			return err
		}
		return fn(ch, turns)
	})
}

// exported is a chat as `chats export --format json` writes it.
type exported struct {
	ID      string         `json:"id"`
	Title   string         `json:"title"`
	Created time.Time      `json:"created"`
	Turns   []exportedTurn `json:"turns"`
}

type exportedTurn struct {
	Seq    uint64   `json:"seq"`
	Query  string   `json:"query"`
	Answer string   `json:"answer"`
	Status string   `json:"status"`
	Error  string   `json:"error,omitempty"`
	Apps   []string `json:"apps,omitempty"`
	// Author is who wrote the answer: an app's name or "assistant";
	// AuthorWords says so as every channel does; Parts is the answer by
	// its authors (hub.Parts).
	Author      string    `json:"author"`
	AuthorWords string    `json:"author_words"`
	Parts       hub.Parts `json:"parts,omitempty"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended,omitzero"`
	// Fallback says why the plan fell back to the plain model.
	Fallback string `json:"fallback,omitempty"`
	// Activity is the turn's app calls and permission decisions;
	// Results its steps' typed results.
	Activity []hub.Activity   `json:"activity,omitempty"`
	Results  []hub.StepResult `json:"results,omitempty"`
}

func exportOf(c hub.Chat, turns []hub.Turn) exported {
	out := exported{ID: c.ID, Title: c.Title, Created: c.Created}
	for _, t := range turns {
		et := exportedTurn{Seq: t.Seq, Query: t.Query, Answer: t.Answer, Status: string(t.Status), Error: t.Error, Started: t.Started, Ended: t.Ended,
			Author: "assistant", AuthorWords: hub.Author(t.AnsweredBy()), Parts: t.AnswerParts()}
		if by := t.AnsweredBy(); hub.AuthorIsApp(by) || by == hub.MonolithApp {
			et.Author = by
		}
		if t.Plan != nil {
			et.Apps = t.Plan.Apps()
			if t.Plan.Fallback {
				et.Fallback = "planner output unusable: " + t.Plan.Reason
			}
		}
		et.Activity, et.Results = t.Activity, t.Results
		out.Turns = append(out.Turns, et)
	}
	return out
}

// writeMarkdown writes a chat as Markdown: a heading per turn with when it
// was asked and which apps answered, the user's words quoted, the answer.
func writeMarkdown(w io.Writer, c hub.Chat, turns []hub.Turn) error {
	title := c.Title
	if title == "" {
		title = c.ID
	}
	fmt.Fprintf(w, "# %s\n\nchat %s · started %s\n", oneLineText(title), c.ID, c.Created.Local().Format("2006-01-02 15:04"))
	for _, t := range turns {
		apps := "bulkhead"
		if t.Plan != nil && len(t.Plan.Apps()) > 0 {
			apps = strings.Join(t.Plan.Apps(), ", ")
		}
		fmt.Fprintf(w, "\n## %d · %s · %s\n\n", t.Seq, t.Started.Local().Format("2006-01-02 15:04"), apps)
		for _, l := range strings.Split(strings.TrimRight(t.Query, "\n"), "\n") {
			fmt.Fprintf(w, "> %s\n", l)
		}
		fmt.Fprintln(w)
		if t.Plan != nil && t.Plan.Fallback {
			fmt.Fprintf(w, "_(the planner's output was unusable; the plain model answered: %s)_\n\n", oneLineText(t.Plan.Reason))
		}
		if ls := activityLines(t.Activity); len(ls) > 0 {
			for _, l := range ls {
				fmt.Fprintln(w, "- "+l)
			}
			fmt.Fprintln(w)
		}
		if t.Answer != "" {
			// Who wrote each word, in every channel: the answer part by
			// part, the assistant's labelled, an app's quoted and framed,
			// every line of it marked.
			fmt.Fprintln(w, strings.TrimRight(t.AnswerParts().Markdown(), "\n"))
		}
		if t.Status != "ok" {
			note := string(t.Status)
			if t.Error != "" {
				note += ": " + t.Error
			}
			fmt.Fprintf(w, "\n_(%s)_\n", oneLineText(note))
		}
	}
	return nil
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// activityLines are a turn's calls and decisions, a line each: each
// permission request with how it was decided, each app call with its
// arguments and outcome.
func activityLines(acts []hub.Activity) []string {
	var out []string
	decided := map[string]*permissions.Decision{}
	for _, a := range acts {
		if a.Kind == hub.EventDecision && a.Decision != nil {
			decided[a.Decision.RequestID] = a.Decision
		}
	}
	failed := map[string]string{}
	for _, a := range acts {
		if a.Kind == hub.EventAppResult {
			failed[a.App+"."+a.Function] = a.Err
		}
	}
	for _, a := range acts {
		switch a.Kind {
		case hub.EventPermission:
			r := a.Permission
			what := fmt.Sprintf("asked: %s %s → %s", r.Kind, r.Subject, r.Object)
			if r.Function != "" {
				what += " (" + r.Function + ")"
			}
			if r.Detail != "" {
				what += ": " + r.Detail
			}
			if r.Expected {
				what += " · expected by the plan"
			} else {
				what += " · NOT expected by the plan"
			}
			if d := decided[r.ID]; d != nil {
				verdict := "denied"
				if d.Allowed {
					verdict = "allowed " + string(d.Answer)
				}
				what += fmt.Sprintf(" — %s (%s)", verdict, d.Source)
			} else {
				what += " — not answered"
			}
			out = append(out, termtext.OneLine(what))
		case hub.EventAppCall:
			what := fmt.Sprintf("ran %s.%s %s", a.App, a.Function, a.Args)
			if err, ok := failed[a.App+"."+a.Function]; ok && err != "" {
				what += " — failed: " + err
			}
			out = append(out, termtext.OneLine(what))
		}
	}
	return out
}
