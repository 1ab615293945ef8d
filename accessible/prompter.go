package accessible

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"charm.land/huh/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Prompter asks permission dialogs as huh forms in accessible mode on
// the chat's own input and output, one dialog at a time.
type Prompter struct {
	mu  sync.Mutex
	in  *Lines
	out io.Writer
}

// NewPrompter asks on in and out.
func NewPrompter(in *Lines, out io.Writer) *Prompter { return &Prompter{in: in, out: out} }

// answer is one entry of a dialog's numbered list.
type answer struct {
	label string
	a     permissions.Answer
	note  bool
}

// Prompt says what r asks and reads the answer. Deny is the default:
// an empty line, or the end of the input, denies.
func (p *Prompter) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return permissions.Decision{}, err
	}
	fmt.Fprintln(p.out)
	for _, l := range describe(r) {
		fmt.Fprintln(p.out, l)
	}
	in, done := p.in.ask(ctx, func(s string) {
		fmt.Fprintf(p.out, "\n(%q came before this question, so it does not answer it; it stays for the chat. Answer now.)\n", plain(s, 60))
	})
	defer done()
	if r.Kind == permissions.KindChanges {
		return p.promptChanges(ctx, in, r)
	}
	var choice string
	if len(r.Choices) > 0 {
		opts := make([]huh.Option[string], len(r.Choices))
		for i, c := range r.Choices {
			opts[i] = huh.NewOption(plain(c, 80), c)
		}
		choice = r.Choices[0]
		if err := p.run(in, huh.NewSelect[string]().Title("Which app should answer it?").Options(opts...).Value(&choice)); err != nil {
			return permissions.Decision{}, err
		}
	}
	answers := answersOf(r)
	pick := len(answers) - 2 // deny
	opts := make([]huh.Option[int], len(answers))
	for i, a := range answers {
		opts[i] = huh.NewOption(a.label, i)
	}
	if err := p.run(in, huh.NewSelect[int]().Title("Your answer (empty denies):").Options(opts...).Value(&pick)); err != nil {
		return permissions.Decision{}, err
	}
	if err := ctx.Err(); err != nil {
		return permissions.Decision{}, err
	}
	a := answers[pick]
	switch {
	case a.note:
		note := ""
		if err := p.run(in, huh.NewInput().Title(fmt.Sprintf("Note to %s (it reaches the app's model):", plain(r.Subject, 40))).CharLimit(500).Value(&note)); err != nil {
			return permissions.Decision{}, err
		}
		return permissions.Decision{Answer: permissions.AnswerDeny, Note: strings.TrimSpace(plain(note, 500))}, nil
	case a.a == permissions.AnswerDeny:
		return permissions.Decision{Answer: permissions.AnswerDeny}, nil
	}
	if !r.Routine() {
		// An allow of what is not routine is chosen, then confirmed: the
		// line-mode form of the dialog's choose-then-enter.
		q := "This request is not routine (see the hub's warning above). Allow it?"
		if r.IsIrreversible() {
			q = "This cannot be undone. Allow it?"
		}
		yes := false
		if err := p.run(in, huh.NewConfirm().Title(q).Affirmative("yes").Negative("no").Value(&yes)); err != nil {
			return permissions.Decision{}, err
		}
		if !yes {
			fmt.Fprintln(p.out, "Denied.")
			return permissions.Decision{Answer: permissions.AnswerDeny}, nil
		}
	}
	return permissions.Decision{Answer: a.a, Choice: choice}, nil
}

// run asks one field in accessible mode; only a line typed after its
// question answers it.
func (p *Prompter) run(in *dialogIn, f huh.Field) error { return runField(in, p.out, f) }

// runField asks f in huh's accessible mode on in, writing to out.
func runField(in *dialogIn, out io.Writer, f huh.Field) error {
	in.question()
	form := huh.NewForm(huh.NewGroup(f)).
		WithAccessible(true).
		WithTheme(huh.ThemeFunc(huh.ThemeBase)).
		WithInput(in).WithOutput(out)
	return form.Run()
}

// answersOf lists what r may be answered with, as the dialog offers it:
// the allows r.Options gives (no permanent grant for what cannot be
// undone, none in a private chat), then deny and deny with a note.
func answersOf(r permissions.Request) []answer {
	var out []answer
	for _, a := range r.Options() {
		if a != permissions.AnswerDeny {
			out = append(out, answer{label: r.Label(a), a: a})
		}
	}
	return append(out, answer{label: r.Label(permissions.AnswerDeny), a: permissions.AnswerDeny}, answer{label: "deny with a note", a: permissions.AnswerDeny, note: true})
}

// describe says what r asks in plain lines: the hub's words first, then
// every value with where it came from.
func describe(r permissions.Request) []string {
	head := fmt.Sprintf("Permission question: %s", r.Kind)
	switch {
	case r.Object != "" && r.Object != r.Subject:
		head += fmt.Sprintf(", from %s to %s", plain(r.Subject, 60), plain(r.Object, 60))
	case r.Subject != "":
		head += ", " + plain(r.Subject, 60)
	}
	if r.Function != "" {
		head += ", " + plain(r.Function, 80)
	}
	lines := []string{head + "."}
	if r.Detail != "" {
		lines = append(lines, plain(r.Detail, 600))
	}
	if len(r.Choices) > 0 {
		cs := make([]string, len(r.Choices))
		for i, c := range r.Choices {
			cs[i] = plain(c, 60)
		}
		lines = append(lines, fmt.Sprintf("Apps that offer it: %s.", strings.Join(cs, ", ")))
	}
	if r.IsIrreversible() {
		lines = append(lines, "It cannot be undone.")
	}
	if f := r.FolderWords(); f != "" {
		lines = append(lines, plain(f, 600))
	}
	w := r.Warning
	if r.IsIrreversible() {
		w = r.WarningBesidesUndo() // said above
	}
	if w != "" {
		lead := "The hub warns: "
		if r.Routine() {
			lead = "The hub says: "
		}
		lines = append(lines, lead+plain(w, 1000))
	}
	if vs := values(r); len(vs) > 0 {
		lines = append(lines, "Values:")
		lines = append(lines, vs...)
	}
	lines = append(lines, describeChanges(r.Changes)...)
	if ch := r.Change; ch != nil {
		lines = append(lines, "The change: "+plain(ch.Summary(), 400)+".")
		for i, l := range ch.Lines {
			if i == 60 {
				lines = append(lines, fmt.Sprintf("  and %d more lines of the change", len(ch.Lines)-60+ch.More))
				break
			}
			word := map[string]string{"-": "removed:", "+": "added:", "@": "at", " ": "unchanged:"}[l.Op]
			lines = append(lines, "  "+word+" "+plain(l.Text, 300))
		}
		if len(ch.Lines) <= 60 && ch.More > 0 {
			lines = append(lines, fmt.Sprintf("  and %d more lines of the change", ch.More))
		}
	}
	return lines
}

// values lists r's arguments, one line each (a key value first), with
// where it came from; at most 20, each clipped.
func values(r permissions.Request) []string {
	raw := bytes.TrimSpace(r.Args)
	if len(raw) == 0 {
		return nil
	}
	prov := map[string]permissions.Provenance{}
	for _, p := range r.Provenance {
		prov[p.Path] = p
	}
	var flat []struct{ path, val string }
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, x[k])
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case string:
			flat = append(flat, struct{ path, val string }{path, x})
		default:
			b, _ := json.Marshal(x)
			flat = append(flat, struct{ path, val string }{path, string(b)})
		}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []string{"  " + plain(string(raw), 300)}
	}
	walk("", v)
	sort.SliceStable(flat, func(i, j int) bool { return prov[flat[i].path].Key && !prov[flat[j].path].Key })
	var out []string
	for i, f := range flat {
		if i == 20 {
			out = append(out, fmt.Sprintf("  and %d more values", len(flat)-20))
			break
		}
		name := f.path
		if name == "" {
			name = "value"
		}
		l := fmt.Sprintf("  %s: %s", plain(name, 60), plain(f.val, 300))
		if p, ok := prov[f.path]; ok {
			l += " (" + plain(p.Words(), 80) + ")"
			if p.Shown != "" {
				l += "; shown as " + plain(p.Shown, 300)
			}
		}
		out = append(out, l)
	}
	return out
}

// plain is s as one line of plain text, cleaned of terminal sequences
// and control characters, at most n cells.
func plain(s string, n int) string {
	s = termtext.Sanitize(s)
	s = strings.Join(strings.Fields(s), " ")
	return ansi.Truncate(s, n, "…")
}
