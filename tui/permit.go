package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// permGrace is how long the user must stop typing before a dialog takes
// answers: every keystroke while it waits goes to the input box and starts
// the wait again, so typing in the chat cannot answer it.
const permGrace = 800 * time.Millisecond

// bell rings the terminal's bell: a dialog wants an answer.
const bell = "\a"

// graceMsg ends the grace wait gen of dialog id (a later keystroke
// started a newer one, and this one is void).
type graceMsg struct {
	id  uint64
	gen int
}

// onPrompts takes the Prompter's queue in: a request that left it (its
// turn was cancelled) closes its dialog, and when no dialog shows the
// first waiting request opens one. The wait is re-armed either way.
func (m *Model) onPrompts(msg promptsMsg) tea.Cmd {
	var cmds []tea.Cmd
	if msg.ver > m.pseen {
		m.pseen = msg.ver
		m.prompts = m.prompts[:0:0]
		in := map[uint64]bool{}
		for _, a := range msg.asks {
			in[a.id] = true
			if !m.gone[a.id] {
				m.prompts = append(m.prompts, a)
			}
		}
		for id := range m.gone {
			if !in[id] {
				delete(m.gone, id) // out of the queue for good
			}
		}
		if m.perm != nil && !slices.ContainsFunc(m.prompts, func(a pendingAsk) bool { return a.id == m.perm.id }) {
			m.closePerm()
			m.notice = "a permission request was withdrawn"
		}
		if m.perm == nil && len(m.prompts) > 0 {
			cmds = append(cmds, m.openPerm(m.prompts[0]))
		}
	}
	cmds = append(cmds, m.prompter.wait(m.pseen, m.w.quit))
	return tea.Batch(cmds...)
}

// openPerm shows request a over whatever is on screen and starts the
// grace wait; a request that is not routine rings the bell.
func (m *Model) openPerm(a pendingAsk) tea.Cmd {
	if m.overlay != overlayPermission {
		m.under = m.overlay
	}
	m.overlay = overlayPermission
	m.perm = newPermDialog(a, m.th)
	var cmds []tea.Cmd
	if len(a.req.Choices) > 0 {
		cmds = append(cmds, m.openChoice(0))
	}
	if !m.perm.routine() {
		cmds = append(cmds, tea.Raw(bell))
	}
	cmds = append(cmds, m.graceWait())
	return tea.Batch(cmds...)
}

// graceWait starts the dialog's grace wait afresh: it takes answers only
// once permGrace has passed without a keystroke.
func (m *Model) graceWait() tea.Cmd {
	p := m.perm
	p.gen++
	p.armed = false
	if m.after == nil {
		return nil
	}
	return m.after(permGrace, graceMsg{id: p.id, gen: p.gen})
}

// onGrace arms the dialog whose current wait ended.
func (m *Model) onGrace(msg graceMsg) {
	if p := m.perm; p != nil && p.id == msg.id && p.gen == msg.gen {
		p.armed = true
	}
}

// typed sends a key (or a paste) meant for the input box there, and
// starts the dialog's grace wait again: the user is typing, not answering.
func (m *Model) typed(msg tea.Msg) tea.Cmd {
	p := m.perm
	p.chosen = ""
	p.caveat = nil
	var cmd tea.Cmd
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, m.keys.Send) {
		cmd = m.send() // a turn runs: the text stays, with a notice
	} else {
		cmd = m.input.update(msg)
	}
	return tea.Batch(cmd, m.graceWait())
}

// closePerm puts back the overlay the dialog covered.
func (m *Model) closePerm() {
	if m.form != nil && (m.form.owner == formNote || m.form.owner == formChoice) {
		m.closeForm()
	}
	m.perm = nil
	m.overlay, m.under = m.under, overlayNone
	if m.overlay == overlayPull && m.pull == nil {
		m.overlay = overlayNone
	}
}

// show opens overlay o, or queues it behind a permission dialog.
func (m *Model) show(o overlay) {
	if m.overlay == overlayPermission {
		if m.under != o {
			m.leaveForms(m.under)
		}
		m.under = o
		return
	}
	if m.overlay != o {
		m.leaveForms(m.overlay)
	}
	m.overlay = o
}

// hide closes overlay o, whether it shows or waits under a dialog.
func (m *Model) hide(o overlay) {
	if m.overlay == o {
		m.overlay = overlayNone
	}
	if m.under == o {
		m.under = overlayNone
	}
}

// waiting is the number of requests queued behind the dialog: those the
// Prompter holds or, when more, those the running turn has asked about
// and not had decided (the broker hands the Prompter one at a time).
func (m Model) waiting() int {
	n := len(m.prompts)
	if m.run != nil {
		n = max(n, m.run.extras.asking())
	}
	if m.perm != nil && n > 0 {
		n--
	}
	return n
}

// answerPerm answers the dialog showing and opens the next one, if any.
func (m *Model) answerPerm(d permissions.Decision) tea.Cmd {
	p := m.perm
	if n := len(p.req.Choices); n > 0 && d.Answer != permissions.AnswerDeny {
		d.Choice = p.req.Choices[min(max(p.pick, 0), n-1)]
	}
	if m.prompter.answer(p.id, d) {
		m.gone[p.id] = true
	}
	m.prompts = slices.DeleteFunc(m.prompts, func(a pendingAsk) bool { return a.id == p.id })
	m.closePerm()
	if len(m.prompts) > 0 {
		return m.openPerm(m.prompts[0])
	}
	return nil
}

// permKey drives the dialog. ↑/↓/pgup/pgdn scroll its values at any
// time. Until it is armed (the user has stopped typing for permGrace),
// every other key goes to the input box and starts the wait again. Armed,
// it answers: o allows once, s and p open the caveat step (caveats.go), d
// and esc deny, n denies with a note, x shows long values whole. A request
// that is not routine takes an allow as a choice, confirmed by enter; any
// other key takes the choice back. A key that answers nothing (a letter of
// a sentence) goes to the input box and disarms the dialog again.
func (m *Model) permKey(msg tea.KeyPressMsg) tea.Cmd {
	p := m.perm
	if p == nil {
		m.closePerm()
		return nil
	}
	s := msg.String()
	if p.noting {
		return m.formUpdate(msg)
	}
	h := m.dialogHeight()
	if p.caveat != nil && p.armed && s != "pgup" && s != "pgdown" {
		if cmd, ok := m.caveatKey(msg); ok {
			return cmd
		}
		return m.typed(msg)
	}
	switch s {
	case "up":
		p.scrollBy(m.th, -1, m.width, h)
		return nil
	case "down":
		p.scrollBy(m.th, 1, m.width, h)
		return nil
	case "pgup":
		p.scrollBy(m.th, -p.page(m.th, m.width, h), m.width, h)
		return nil
	case "pgdown":
		p.scrollBy(m.th, p.page(m.th, m.width, h), m.width, h)
		return nil
	}
	if !p.armed {
		return m.typed(msg)
	}
	if n := len(p.req.Choices); n > 0 {
		// Picking an app answers nothing: an allow still has to follow.
		switch {
		case s == "left" || s == "shift+tab" || s == "right" || s == "tab":
			p.chosen = ""
			if m.formOf(formChoice) == nil || m.formOf(formChoice) != p.choiceForm {
				// The form went (another took its place): ←/→ wrap as before.
				d := 1
				if s == "left" || s == "shift+tab" {
					d = n - 1
				}
				return m.openChoice((p.pick + d) % n)
			}
			cmd := m.formUpdate(msg)
			p.pick = p.hovered()
			return cmd
		case len(s) == 1 && s[0] >= '1' && s[0] <= '9' && int(s[0]-'1') < n:
			p.chosen = ""
			return m.openChoice(int(s[0] - '1'))
		}
	}
	if p.chosen != "" {
		if s == "enter" {
			return m.answerPerm(permissions.Decision{Answer: p.chosen})
		}
		p.chosen = ""
		if s == "esc" {
			return nil
		}
	}
	// s and p save a grant: its limits are chosen first (caveats.go).
	limit := func(a permissions.Answer) tea.Cmd {
		if p.offered(a) {
			p.caveat = newCaveatStep(a, p.req, m.th)
			return nil
		}
		return m.typed(msg)
	}
	switch s {
	case "o":
		if !p.offered(permissions.AnswerOnce) {
			return m.typed(msg)
		}
		if p.deliberate() {
			p.chosen = permissions.AnswerOnce
			return nil
		}
		return m.answerPerm(permissions.Decision{Answer: permissions.AnswerOnce})
	case "s":
		return limit(permissions.AnswerSession)
	case "p":
		return limit(permissions.AnswerPermanent)
	case "d", "esc":
		return m.answerPerm(permissions.Decision{Answer: permissions.AnswerDeny})
	case "n":
		return m.openNote()
	case "x":
		p.expanded = !p.expanded
		p.scroll = 0
		return nil
	}
	return m.typed(msg)
}

// dialogHeight is the room a permission dialog has: the chat area above
// the input box, which stays in view so that typing can be seen going
// there.
func (m Model) dialogHeight() int {
	return max(m.height-1-1-m.input.ta.Height(), 3)
}

// permWheel scrolls the arguments with the mouse wheel.
func (m *Model) permWheel(msg tea.MouseWheelMsg) {
	if m.perm == nil {
		return
	}
	switch msg.Button {
	case tea.MouseWheelUp:
		m.perm.scrollBy(m.th, -1, m.width, m.dialogHeight())
	case tea.MouseWheelDown:
		m.perm.scrollBy(m.th, 1, m.width, m.dialogHeight())
	}
}

// openNote opens the deny-with-note field (a huh input) in the dialog:
// enter denies with the note, esc goes back to the answers.
func (m *Model) openNote() tea.Cmd {
	p := m.perm
	note := ""
	in := huh.NewInput().
		Title(fmt.Sprintf("note to %s", widget.Clean(p.req.Subject))).
		Description("enter denies with it · esc back").
		Placeholder("why not (reaches the app's model)").
		Prompt("› ").CharLimit(500).Value(&note)
	id := p.id
	cmd := m.openForm(formNote, dialogWidth(m.width)-4, func(m *Model, completed bool) tea.Cmd {
		p := m.perm
		if p == nil || p.id != id {
			return nil
		}
		p.noting, p.noteForm = false, nil
		if completed {
			return m.answerPerm(permissions.Decision{Answer: permissions.AnswerDeny, Note: strings.TrimSpace(note)})
		}
		return nil
	}, in)
	p.noting, p.noteForm = true, m.form.f
	return cmd
}

// openChoice puts the dialog's candidates in a huh select with the
// cursor on pick. Moving it answers nothing: an allow still has to
// follow, and takes the app under the cursor.
func (m *Model) openChoice(pick int) tea.Cmd {
	p := m.perm
	opts := make([]huh.Option[string], len(p.req.Choices))
	for i, c := range p.req.Choices {
		opts[i] = huh.NewOption(fmt.Sprintf("%d. %s", i+1, widget.Clean(c)), c)
	}
	p.pick = min(max(pick, 0), len(opts)-1)
	value := p.req.Choices[p.pick]
	sel := huh.NewSelect[string]().
		Title(fmt.Sprintf("which app answers %s?", widget.Clean(p.req.Function))).
		Options(opts...).Height(len(opts) + 1).Value(&value)
	id := p.id
	cmd := m.openForm(formChoice, dialogWidth(m.width)-4, func(m *Model, _ bool) tea.Cmd {
		if p := m.perm; p != nil && p.id == id {
			p.choiceForm = nil // the pick stays: an allow still takes it
		}
		return nil
	}, sel)
	p.choiceForm = m.form.f
	return cmd
}

// hovered is the candidate under the select's cursor.
func (p *permDialog) hovered() int {
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
