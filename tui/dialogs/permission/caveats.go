package permission

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"github.com/charmbracelet/x/ansi"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/request"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// caveatStep is the dialog's second step after s or p: the limits of the
// grant about to be saved — an expiry, a number of uses and a constraint
// on one argument — and the exact scope they make. enter saves, esc goes
// back to the answers. Irreversible requests never get here: they offer
// neither s nor p.
type caveatStep struct {
	answer perm.Answer     // session or permanent
	row    int             // the row with the cursor (caveatRows)
	choice [caveatRows]int // the choice in each row
	args   []argChoice     // the argument constraints offered; [0] is none
	// fields are the rows as huh inline selects bound to choice: ←/→
	// change the focused one at once (no message round trip), and the
	// step moves the focus between them itself.
	fields [caveatRows]*huh.Select[int]
}

// The rows of the step, top to bottom.
const (
	rowExpiry = iota
	rowUses
	rowArgs
	caveatRows
)

var (
	expiryChoices = []string{"none", "1 hour", "today", "7 days"}
	usesChoices   = []int{0, 1, 5, 20} // 0: unlimited
)

// argChoice is one argument constraint: the argument must equal value, or
// with folder, lie under it (value ends in "/"). An empty name is none.
type argChoice struct {
	name, value string
	folder      bool
}

// label says what the constraint means, with its exact value.
func (a argChoice) label() string {
	switch {
	case a.name == "":
		return "any arguments"
	case a.folder:
		return "only under this folder: " + a.name + "=" + a.value
	}
	switch strings.ToLower(a.name) {
	case "to", "recipient", "email", "address":
		return "only to this recipient: " + a.name + "=" + a.value
	}
	return "only this " + a.name + ": " + a.name + "=" + a.value
}

func newCaveatStep(a perm.Answer, r perm.Request, th style.Theme) *caveatStep {
	c := &caveatStep{answer: a, args: argChoices(r.Args)}
	if r.Private {
		// A limit would keep the private text in the grant.
		c.args = []argChoice{{}}
	}
	uses := make([]string, len(usesChoices))
	for i, n := range usesChoices {
		uses[i] = fmt.Sprint(n)
		if n == 0 {
			uses[i] = "unlimited"
		}
	}
	args := make([]string, len(c.args))
	for i, x := range c.args {
		args[i] = widget.OneLine(x.label())
	}
	keys := forms.Keys()
	keys.Select.Left = key.NewBinding(key.WithKeys("left"))
	keys.Select.Right = key.NewBinding(key.WithKeys("right", "space"))
	for row, def := range []struct {
		title string
		opts  []string
	}{{"expires", expiryChoices}, {"uses", uses}, {"only", args}} {
		opts := make([]huh.Option[int], len(def.opts))
		for i, o := range def.opts {
			opts[i] = huh.NewOption(o, i)
		}
		f := huh.NewSelect[int]().Title(def.title).Inline(true).Options(opts...).Value(&c.choice[row])
		f.WithTheme(forms.Theme(th))
		f.WithKeyMap(keys)
		c.fields[row] = f
	}
	c.fields[0].Focus()
	return c
}

// argChoices proposes constraints from a request's arguments: for each
// short, one-line string argument its exact value, and for a path-like one
// its folder first. Other arguments (numbers, objects) are not offered.
func argChoices(raw json.RawMessage) []argChoice {
	out := []argChoice{{}}
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return out
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		var s string
		if json.Unmarshal(args[k], &s) != nil || s == "" || len(s) > 200 || strings.ContainsAny(s, "\r\n") || widget.Clean(s) != s {
			continue
		}
		if pathLike(k, s) {
			if strings.HasSuffix(s, "/") {
				out = append(out, argChoice{name: k, value: s, folder: true})
				continue
			}
			switch dir := path.Dir(s); dir {
			case ".":
			case "/":
				out = append(out, argChoice{name: k, value: "/", folder: true})
			default:
				out = append(out, argChoice{name: k, value: dir + "/", folder: true})
			}
		}
		out = append(out, argChoice{name: k, value: s})
	}
	return out
}

// pathLike reports whether argument name=value is a file path: by its
// name, or a value with a slash and no blank (free text such as "a/b
// testing" or "and/or" is not one, and no folder is offered for it).
func pathLike(name, value string) bool {
	switch strings.ToLower(name) {
	case "path", "file", "filename", "filepath", "dir", "directory", "folder", "src", "dst", "source", "destination_path":
		return true
	}
	return strings.Contains(value, "/") && !strings.Contains(value, "://") && !strings.ContainsAny(value, " \t")
}

// caveats are the chosen limits, with times from now.
func (c *caveatStep) caveats(now time.Time) perm.Caveats {
	var cv perm.Caveats
	switch c.choice[rowExpiry] {
	case 1:
		cv.Expires = now.Add(time.Hour)
	case 2:
		y, m, d := now.Date()
		cv.Expires = time.Date(y, m, d+1, 0, 0, 0, 0, now.Location())
	case 3:
		cv.Expires = now.Add(7 * 24 * time.Hour)
	}
	cv.UsesLeft = usesChoices[c.choice[rowUses]]
	if a := c.args[c.choice[rowArgs]]; a.name != "" {
		cv.Args = map[string]string{a.name: a.value}
	}
	return cv
}

// scope is the exact scope being saved, in words: "allow collab mail →
// drive drive.search, only query=Q3 report, for 1 hour, 5 uses, permanently".
func (c *caveatStep) scope(r perm.Request) string {
	what := string(r.Kind) + " " + request.Target(r)
	if r.Function != "" && !strings.Contains(request.Target(r), r.Function) {
		what += " (" + r.Function + ")"
	}
	parts := []string{"allow " + what}
	if a := c.args[c.choice[rowArgs]]; a.name != "" {
		if a.folder {
			parts = append(parts, "only "+a.name+" under "+a.value)
		} else {
			parts = append(parts, "only "+a.name+"="+a.value)
		}
	}
	switch c.choice[rowExpiry] {
	case 1:
		parts = append(parts, "for 1 hour")
	case 2:
		parts = append(parts, "until the end of today")
	case 3:
		parts = append(parts, "for 7 days")
	}
	switch n := usesChoices[c.choice[rowUses]]; n {
	case 0:
	case 1:
		parts = append(parts, "1 use")
	default:
		parts = append(parts, fmt.Sprintf("%d uses", n))
	}
	if c.answer == perm.AnswerPermanent {
		parts = append(parts, "permanently")
	} else {
		parts = append(parts, "for this session")
	}
	return widget.Clean(strings.Join(parts, ", "))
}

// count is the number of choices in row.
func (c *caveatStep) count(row int) int {
	switch row {
	case rowExpiry:
		return len(expiryChoices)
	case rowUses:
		return len(usesChoices)
	}
	return len(c.args)
}

// move changes the row with the cursor (dr), wrapping; the focus goes
// with it.
func (c *caveatStep) move(dr int) {
	c.fields[c.row].Blur()
	c.row = (c.row + dr + caveatRows) % caveatRows
	c.fields[c.row].Focus()
}

// pick gives a ←/→ key to the focused row's select, which changes its
// choice (wrapping).
func (c *caveatStep) pick(msg tea.Msg) {
	c.fields[c.row].Update(msg)
}

// lines draw the step in iw cells: the rows, the scope and the keys; short
// leaves out the heading.
func (c *caveatStep) lines(th style.Theme, r perm.Request, iw int, short bool) []string {
	var out []string
	if !short {
		what := "Limits of this session grant"
		if c.answer == perm.AnswerPermanent {
			what = "Limits of this permanent grant"
		}
		out = append(out, th.BoxTitle.Render(ansi.Truncate(what, iw, "…")))
	}
	for row, f := range c.fields {
		lead := "  "
		if row == c.row {
			lead = th.Key.Render("▸ ")
		}
		// huh draws an inline select as its title over "← choice →": one
		// line here.
		f.WithWidth(max(iw-12, 10))
		parts := strings.Split(f.View(), "\n")
		for i := range parts {
			parts[i] = widget.TrimRightSpace(parts[i])
		}
		parts[0] += strings.Repeat(" ", max(8-ansi.StringWidth(parts[0]), 0))
		l := lead + strings.Join(parts, " ")
		if n := c.count(row); n > 1 {
			l += th.Dim.Render(fmt.Sprintf(" %d of %d", c.choice[row]+1, n))
		} else {
			l += th.Dim.Render(" (nothing to limit)")
		}
		out = append(out, ansi.Truncate(l, iw, "…"))
	}
	for _, l := range strings.Split(widget.FitWidth("Saves: "+c.scope(r), iw), "\n") {
		out = append(out, th.OK.Render(l))
	}
	keys := th.Key.Render("enter") + " save   " + th.Key.Render("esc") + " back   " + th.Key.Render("↑/↓ ←/→") + " choose"
	return append(out, ansi.Truncate(keys, iw, "…"))
}

// caveatKey drives the step: ↑/↓ (tab) pick a row, ←/→ (space) a choice,
// enter answers with the limits, esc goes back to the answers. A key it
// does not know is typing (false).
func (p *Dialog) caveatKey(msg tea.KeyPressMsg) (tea.Cmd, Outcome, bool) {
	c := p.caveat
	switch msg.String() {
	case "up", "shift+tab":
		c.move(-1)
	case "down", "tab":
		c.move(1)
	case "left", "right", "space":
		c.pick(msg)
	case "enter":
		cmd, out := p.answer(perm.Decision{Answer: c.answer, Caveats: c.caveats(p.c.Now())})
		return cmd, out, true
	case "esc":
		p.caveat = nil
	default:
		return nil, Outcome{}, false // typing: not the step's
	}
	return nil, Outcome{}, true
}
