package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/permission"
)

// The root's side of the permission dialog (tui/dialogs/permission): the
// Prompter's queue, which request shows, what the dialog covers, and
// what its outcomes do — a key meant for the input goes there, an answer
// goes to the Prompter and the next request opens.

// Prompter is the broker's permissions.Prompter whose requests show as
// permission dialogs (give the same one to the engine and to Options).
type Prompter = permission.Prompter

// NewPrompter returns a Prompter with nothing pending.
func NewPrompter() *Prompter { return permission.NewPrompter() }

// onPrompts takes the Prompter's queue in: a request that left it (its
// turn was cancelled) closes its dialog, and when no dialog shows the
// first waiting request opens one. The wait is re-armed either way.
func (m *Model) onPrompts(msg permission.Queue) tea.Cmd {
	var cmds []tea.Cmd
	if msg.Ver > m.pseen {
		m.pseen = msg.Ver
		m.prompts = m.prompts[:0:0]
		in := map[uint64]bool{}
		for _, a := range msg.Asks {
			in[a.ID] = true
			if !m.gone[a.ID] {
				m.prompts = append(m.prompts, a)
			}
		}
		for id := range m.gone {
			if !in[id] {
				delete(m.gone, id) // out of the queue for good
			}
		}
		if m.perm != nil && !slices.ContainsFunc(m.prompts, func(a permission.Ask) bool { return a.ID == m.perm.ID() }) {
			m.closePerm()
			m.notice = "a permission request was withdrawn"
		}
		if m.perm == nil && len(m.prompts) > 0 {
			cmds = append(cmds, m.openPerm(m.prompts[0]))
		}
	}
	cmds = append(cmds, m.prompter.Wait(m.pseen, m.w.quit))
	return tea.Batch(cmds...)
}

// openPerm shows request a over whatever is on screen. The form open
// under it — a confirmation of the chats list or of a screen, /model's
// picker — ends as esc would: the dialog takes the keys now, and one form
// is open at a time.
func (m *Model) openPerm(a permission.Ask) tea.Cmd {
	if m.overlay != overlayPermission {
		m.under = m.overlay
	}
	m.overlay = overlayPermission
	left := m.leaveAllForms()
	var cmd tea.Cmd
	m.perm, cmd = permission.New(a, permission.Config{
		Theme: m.th, Width: m.width, Height: m.dialogHeight(), Now: m.now,
	})
	return tea.Batch(left, cmd)
}

// permKey hands a key to the dialog and acts on its outcome.
func (m *Model) permKey(msg tea.Msg) tea.Cmd {
	if m.perm == nil {
		m.closePerm()
		return nil
	}
	cmd, out := m.perm.Update(msg)
	return tea.Batch(cmd, m.onDialog(out))
}

// onDialog acts on what the dialog asked: a key or a paste meant for the
// input box goes there (toInput), an answer goes to the Prompter.
func (m *Model) onDialog(out permission.Outcome) tea.Cmd {
	switch {
	case out.Answer != nil:
		return m.answerPerm(*out.Answer)
	case out.Typed != nil:
		// A key the dialog does not answer to: typing, which disarms it
		// again (overlay.go).
		return m.toInput(out.Typed)
	}
	return nil
}

// closePerm puts back the overlay the dialog covered.
func (m *Model) closePerm() {
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
		n = max(n, m.run.Extras.Asking())
	}
	if m.perm != nil && n > 0 {
		n--
	}
	return n
}

// answerPerm answers the dialog showing and opens the next one, if any.
func (m *Model) answerPerm(d permissions.Decision) tea.Cmd {
	id := m.perm.ID()
	if m.prompter.Answer(id, d) {
		m.gone[id] = true
	}
	m.prompts = slices.DeleteFunc(m.prompts, func(a permission.Ask) bool { return a.ID == id })
	m.closePerm()
	if len(m.prompts) > 0 {
		return m.openPerm(m.prompts[0])
	}
	return nil
}

// dialogHeight is the room a permission dialog has: the chat area above
// the input box, which stays in view so that typing can be seen going
// there.
func (m Model) dialogHeight() int {
	return max(m.height-1-1-m.input.ta.Height(), 3)
}
