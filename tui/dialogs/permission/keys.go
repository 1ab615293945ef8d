package permission

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// bell rings the terminal's bell: a dialog wants an answer.
const bell = "\a"

// Config is what a dialog needs of the root model.
type Config struct {
	Theme style.Theme
	// Width and Height are the room the dialog has: the terminal's width,
	// and the chat area above the input box (Resize follows them).
	Width, Height int
	Now           func() time.Time // the caveat step's expiries count from it
}

// Outcome is what the dialog's Update asks of the root model.
type Outcome struct {
	// Typed is a key or a paste meant for the input box: the dialog is
	// not armed yet, or the key answers nothing (a letter of a sentence).
	// The root hands it to the input (enter sends the message there) and
	// disarms the dialog again: the person is typing, not answering.
	Typed tea.Msg
	// Answer is the user's decision, when this message made one.
	Answer *perm.Decision
}

// New opens the dialog of request a, unarmed, and returns what it starts
// with: the choice among apps of a request with choices, and the bell for
// a request that is not routine. The root arms it (SetArmed) once the
// person has stopped typing for a while (tui/overlay.go).
func New(a Ask, c Config) (*Dialog, tea.Cmd) {
	if c.Now == nil {
		c.Now = time.Now
	}
	p := &Dialog{c: c, id: a.ID, req: a.Req, values: dialogValues(a.Req), judged: judgement(a.Req)}
	var cmds []tea.Cmd
	if len(a.Req.Choices) > 0 {
		cmds = append(cmds, p.openChoice(0))
	}
	if !p.routine() {
		cmds = append(cmds, tea.Raw(bell))
	}
	return p, tea.Batch(cmds...)
}

// ID is the request's place in the Prompter's queue.
func (p *Dialog) ID() uint64 { return p.id }

// Request is what the dialog asks.
func (p *Dialog) Request() perm.Request { return p.req }

// Noting reports whether the note of a deny is being typed (the input
// box's cursor is not shown then).
func (p *Dialog) Noting() bool { return p.noting }

// Routine reports whether the request is drawn calm.
func (p *Dialog) Routine() bool { return p.routine() }

// Resize gives the dialog the room it has.
func (p *Dialog) Resize(width, height int) { p.c.Width, p.c.Height = width, height }

// SetTheme draws the dialog in th from now on.
func (p *Dialog) SetTheme(th style.Theme) { p.c.Theme, p.setLines = th, nil }

// SetArmed says whether the dialog takes answers: the root decides
// (its gate, tui/overlay.go), the dialog draws its answers dimmed until
// then and hands every key but a scroll to the input box.
func (p *Dialog) SetArmed(armed bool) { p.armed = armed }

// Armed reports whether the dialog takes answers.
func (p *Dialog) Armed() bool { return p.armed }

// Update handles one message: a key, a paste, the wheel, and its forms'
// own messages.
func (p *Dialog) Update(msg tea.Msg) (tea.Cmd, Outcome) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return p.key(msg)
	case tea.PasteMsg:
		if p.noting {
			return p.formUpdate(msg)
		}
		return p.typed(msg) // a paste is typing: it goes to the input
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			p.scrollBy(-1)
		case tea.MouseWheelDown:
			p.scrollBy(1)
		}
	default:
		return p.formUpdate(msg)
	}
	return nil, Outcome{}
}

// typed hands a key (or a paste) meant for the input box to the root,
// and disarms the dialog: the user is typing, not answering (the root
// arms it again once the typing stops).
func (p *Dialog) typed(msg tea.Msg) (tea.Cmd, Outcome) {
	p.takeBack()
	p.caveat = nil
	p.armed = false
	return nil, Outcome{Typed: msg}
}

// answer is the outcome of a decision; a request with choices takes the
// candidate picked.
func (p *Dialog) answer(d perm.Decision) (tea.Cmd, Outcome) {
	if n := len(p.req.Choices); n > 0 && d.Answer != perm.AnswerDeny {
		d.Choice = p.req.Choices[min(max(p.pick, 0), n-1)]
	}
	return nil, Outcome{Answer: &d}
}

// key drives the dialog. ↑/↓/pgup/pgdn scroll its values at any time.
// Until it is armed (the root's gate: the user has stopped typing for
// widget.ArmDelay), every other key goes to the input box. Armed, it
// answers: o allows once, s and p open the caveat step (caveats.go), d
// and esc deny, n denies with a note, x shows long values whole. A
// request that is not routine takes an allow as a choice, confirmed by
// enter; any other key takes the choice back. A key that answers nothing
// (a letter of a sentence) goes to the input box and disarms the dialog
// again.
func (p *Dialog) key(msg tea.KeyPressMsg) (tea.Cmd, Outcome) {
	s := msg.String()
	if p.noting {
		return p.formUpdate(msg)
	}
	if p.picksForm != nil {
		// ↑/↓ move in the picker; pgup/pgdn scroll the entries it picks
		// from, their warnings and diffs.
		switch s {
		case "pgup":
			p.scrollBy(-p.page())
			return nil, Outcome{}
		case "pgdown":
			p.scrollBy(p.page())
			return nil, Outcome{}
		}
		return p.picksUpdate(msg)
	}
	if p.caveat != nil && p.armed && s != "pgup" && s != "pgdown" {
		if cmd, out, ok := p.caveatKey(msg); ok {
			return cmd, out
		}
		return p.typed(msg)
	}
	switch s {
	case "up":
		p.scrollBy(-1)
		return nil, Outcome{}
	case "down":
		p.scrollBy(1)
		return nil, Outcome{}
	case "pgup":
		p.scrollBy(-p.page())
		return nil, Outcome{}
	case "pgdown":
		p.scrollBy(p.page())
		return nil, Outcome{}
	}
	if !p.armed {
		return p.typed(msg)
	}
	if n := len(p.req.Choices); n > 0 {
		// Picking an app answers nothing: an allow still has to follow.
		switch {
		case s == "left" || s == "shift+tab" || s == "right" || s == "tab":
			p.takeBack()
			if p.choiceForm == nil {
				// The select ended (esc, enter): ←/→ wrap as before.
				d := 1
				if s == "left" || s == "shift+tab" {
					d = n - 1
				}
				return p.openChoice((p.pick + d) % n), Outcome{}
			}
			cmd, _ := p.formUpdate(msg)
			p.pick = p.hovered()
			return cmd, Outcome{}
		case len(s) == 1 && s[0] >= '1' && s[0] <= '9' && int(s[0]-'1') < n:
			p.takeBack()
			return p.openChoice(int(s[0] - '1')), Outcome{}
		}
	}
	if p.chosen != "" {
		if s == "enter" {
			return p.answer(perm.Decision{Answer: p.chosen, Picks: p.picked})
		}
		p.takeBack()
		if s == "esc" {
			return nil, Outcome{}
		}
	}
	if p.req.Kind == perm.KindChanges {
		if cmd, out, ok := p.changesKey(s); ok {
			return cmd, out
		}
	}
	// s and p save a grant: its limits are chosen first (caveats.go).
	limit := func(a perm.Answer) (tea.Cmd, Outcome) {
		if p.offered(a) {
			p.caveat = newCaveatStep(a, p.req, p.c.Theme)
			return nil, Outcome{}
		}
		return p.typed(msg)
	}
	switch s {
	case "o":
		if !p.offered(perm.AnswerOnce) {
			return p.typed(msg)
		}
		if p.deliberate() {
			p.chosen = perm.AnswerOnce
			return nil, Outcome{}
		}
		return p.answer(perm.Decision{Answer: perm.AnswerOnce})
	case "s":
		return limit(perm.AnswerSession)
	case "p":
		return limit(perm.AnswerPermanent)
	case "d", "esc":
		return p.answer(perm.Decision{Answer: perm.AnswerDeny})
	case "n":
		return p.openNote(), Outcome{}
	case "x":
		p.expanded = !p.expanded
		p.scroll = 0
		return nil, Outcome{}
	}
	return p.typed(msg)
}

// takeBack drops the allow (or the discard) waiting for enter.
func (p *Dialog) takeBack() { p.chosen, p.picked = "", nil }

// scrollBy moves the values by delta lines, keeping the window full.
func (p *Dialog) scrollBy(delta int) {
	l, _ := p.fit(p.c.Theme, p.c.Width, p.c.Height)
	p.scroll = max(min(p.scroll+delta, l.total-l.window), 0)
}

// page is how many lines pgup and pgdn move.
func (p *Dialog) page() int {
	l, _ := p.fit(p.c.Theme, p.c.Width, p.c.Height)
	return max(l.window-1, 1)
}

// formUpdate gives msg to the dialog's open form — the note, or the
// choice among apps — and acts on its end: a note submitted denies with
// it; esc leaves the note (back to the answers) or the select (the pick
// stays: an allow still takes it).
func (p *Dialog) formUpdate(msg tea.Msg) (tea.Cmd, Outcome) {
	switch {
	case p.picksForm != nil:
		return p.picksUpdate(msg)
	case p.noteForm != nil:
		f, cmd, ended := forms.Update(p.noteForm, msg)
		p.noteForm = f
		if ended == forms.Open {
			return cmd, Outcome{}
		}
		p.noting, p.noteForm = false, nil
		if ended == forms.Submitted {
			return cmd, Outcome{Answer: &perm.Decision{Answer: perm.AnswerDeny, Note: strings.TrimSpace(*p.note)}}
		}
		return cmd, Outcome{}
	case p.choiceForm != nil:
		f, cmd, ended := forms.Update(p.choiceForm, msg)
		p.choiceForm = f
		if ended != forms.Open {
			p.choiceForm = nil
		}
		return cmd, Outcome{}
	}
	return nil, Outcome{}
}

// openNote opens the deny-with-note field (a huh input) in the dialog:
// enter denies with the note, esc goes back to the answers. It takes the
// choice select's place (one form at a time).
func (p *Dialog) openNote() tea.Cmd {
	note := ""
	p.note = &note
	in := huh.NewInput().
		Title(fmt.Sprintf("note to %s", widget.Clean(p.req.Subject))).
		Description("enter denies with it · esc back").
		Placeholder("why not (reaches the app's model)").
		Prompt("› ").CharLimit(500).Value(&note)
	p.choiceForm = nil
	p.noteForm = forms.New(p.c.Theme, widget.DialogWidth(p.c.Width)-4, in)
	p.noting = true
	return p.noteForm.Init()
}

// openChoice puts the dialog's candidates in a huh select with the
// cursor on pick. Moving it answers nothing: an allow still has to
// follow, and takes the app under the cursor.
func (p *Dialog) openChoice(pick int) tea.Cmd {
	opts := make([]huh.Option[string], len(p.req.Choices))
	for i, c := range p.req.Choices {
		opts[i] = huh.NewOption(fmt.Sprintf("%d. %s", i+1, widget.Clean(c)), c)
	}
	p.pick = min(max(pick, 0), len(opts)-1)
	value := p.req.Choices[p.pick]
	p.choice = &value
	sel := huh.NewSelect[string]().
		Title(fmt.Sprintf("which app answers %s?", widget.Clean(p.req.Function))).
		Options(opts...).Height(len(opts) + 1).Value(&value)
	p.choiceForm = forms.New(p.c.Theme, widget.DialogWidth(p.c.Width)-4, sel)
	return p.choiceForm.Init()
}

// hovered is the candidate under the select's cursor.
func (p *Dialog) hovered() int {
	if p.choiceForm == nil {
		return p.pick
	}
	if sel, ok := p.choiceForm.GetFocusedField().(*huh.Select[string]); ok {
		if v, ok := sel.Hovered(); ok {
			if i := slices.Index(p.req.Choices, v); i >= 0 {
				return i
			}
		}
	}
	return p.pick
}

// Limiting reports whether the caveat step is open (after s or p).
func (p *Dialog) Limiting() bool { return p.caveat != nil }

// Scope is the exact scope the caveat step would save, in words; "" when
// the step is not open.
func (p *Dialog) Scope() string {
	if p.caveat == nil {
		return ""
	}
	return p.caveat.scope(p.req)
}

// Pick is the candidate an allow chooses, for a request with choices.
func (p *Dialog) Pick() int { return p.pick }
