package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/tui/chat"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/pull"
	permscreen "github.com/bulkhead-dev/bulkhead/tui/screens/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// key routes a key press: ctrl+c always quits; an open dialog takes
// everything else; otherwise the root bindings win over the input.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, m.keys.Quit) {
		m.stopAll()
		return tea.Quit
	}
	if m.unarmed() && !scrollKey(msg) {
		// A dialog the person has not seen yet answers nothing: the key
		// is typing, and goes to the input box behind it (overlay.go).
		return m.toInput(msg)
	}
	switch m.overlay {
	case overlayHelp:
		m.helpKey(msg)
		return nil
	case overlayChats:
		return m.chatsKey(msg)
	case overlayPull:
		return m.pullKey(msg)
	case overlayPermission:
		return m.permKey(msg)
	case overlayManager:
		return m.toScreen(msg)
	case overlayApps:
		return m.toScreen(msg)
	case overlayMemory:
		return m.toScreen(msg)
	case overlayModels:
		return m.modelsKey(msg)
	}
	if cmd, ok := m.menuKey(msg); ok {
		return cmd
	}
	switch {
	case key.Matches(msg, m.keys.Perms):
		return m.openManager(permscreen.Grants)
	case key.Matches(msg, m.keys.Trusted):
		return m.toggleTrusted()
	case key.Matches(msg, m.keys.Apps):
		return m.openApps()
	case key.Matches(msg, m.keys.Memory):
		return m.openMemory()
	case key.Matches(msg, m.keys.Cancel):
		if !m.setupHide() {
			m.cancelTurn()
		}
	case key.Matches(msg, m.keys.Send):
		return m.send()
	case key.Matches(msg, m.keys.Retry):
		return m.retry()
	case key.Matches(msg, m.keys.Thinking):
		m.chat.ExpandThinking = !m.chat.ExpandThinking
	case key.Matches(msg, m.keys.Reveal):
		return m.reveal()
	case key.Matches(msg, m.keys.Mouse):
		m.mouse = !m.mouse
		if m.mouse {
			m.notice = "mouse on: the wheel scrolls; shift+drag selects text · f2 turns it off"
		} else {
			m.notice = "mouse off: select text as usual; pgup/pgdn scroll · f2 turns it on"
		}
	case key.Matches(msg, m.keys.Chats):
		return m.openChats()
	case key.Matches(msg, m.keys.NewChat):
		return m.newChat(false)
	case key.Matches(msg, m.keys.Private):
		return m.newChat(true)
	case key.Matches(msg, m.keys.PageUp):
		m.chat.Scroll(m.drawCtx(), msg, true)
	case key.Matches(msg, m.keys.PageDown):
		m.chat.Scroll(m.drawCtx(), msg, false)
	case key.Matches(msg, m.keys.Help) && (msg.String() != "?" || m.input.value() == ""):
		m.openHelp()
	case (msg.String() == "up" || msg.String() == "down") && m.input.recallKey(msg.String(), m.chat.Prompts()):
	default:
		return m.input.update(msg)
	}
	return nil
}

// stopAll cancels the running turn and pull (ctrl+c).
func (m *Model) stopAll() {
	if m.run != nil {
		m.w.cancel(m.run.ID)
	}
	if m.pulling != nil {
		m.w.cancel(m.pulling.id)
	}
}

func (m *Model) cancelTurn() {
	switch {
	case m.run != nil && !m.run.Cancelling:
		m.run.Cancelling = true
		m.w.cancel(m.run.ID)
		m.notice = "cancelling…"
	case m.notice != "":
		m.notice = ""
	}
}

// send starts a turn with the input's text; "/private <query>" asks the
// query privately (private.go). The chat of a new view is created first
// (createChat), so empty chats never reach the hub.
func (m *Model) send() tea.Cmd {
	q := m.input.value()
	if strings.TrimSpace(q) == "" {
		return nil
	}
	if cmd, ok := m.slash(q); ok {
		return cmd
	}
	q, private, ok := privateQuery(q)
	if !ok {
		m.notice = "/private needs a query: /private <your question> — it runs with no memory and nothing is kept"
		return nil
	}
	if m.run != nil {
		m.notice = stillAnswering + " — esc cancels it; your text stays here"
		return nil
	}
	if why := m.setupRefuses(); why != "" {
		m.notice = why
		return nil
	}
	m.input.reset()
	m.notice = ""
	m.chat.Failure = ""
	m.chat.Follow = true
	m.nextID++
	r := newTurnRun(m.nextID, m.chat.Chat.ID, q, 0, false)
	r.vid = m.chat.VID
	r.Private, r.after = private, m.chat.LastSeq()
	m.run = r
	if r.chat == "" {
		return tea.Batch(createChat(m.b, m.chat.Chat.Private, r.ID), m.tick())
	}
	return tea.Batch(m.startRun(r), m.tick())
}

// startRun hands a run to a worker and returns the Cmd that reads it.
func (m *Model) startRun(r *turnRun) tea.Cmd {
	ctx := m.w.add(r.ID)
	return m.w.start(ctx, r.ID, r.work(m.b), r.wait)
}

func (m *Model) retry() tea.Cmd {
	if m.setup.shows() {
		return m.setupNow()
	}
	if m.run != nil {
		m.notice = stillAnswering + " — esc cancels it first"
		return nil
	}
	t, ok := m.chat.RetryTarget()
	if !ok || m.chat.Chat.ID == "" {
		m.notice = "nothing to retry"
		return nil
	}
	return m.retryTurn(m.chat.Chat.ID, t.Seq, t.Query)
}

func (m *Model) retryTurn(chat string, seq uint64, query string) tea.Cmd {
	m.notice = ""
	m.chat.Failure = ""
	m.chat.Follow = true
	m.nextID++
	r := newTurnRun(m.nextID, chat, query, seq, true)
	r.vid = m.chat.VID
	if chat != m.chat.Chat.ID {
		r.vid = 0
	}
	m.run = r
	return tea.Batch(m.startRun(r), m.tick())
}

func (m *Model) onChatCreated(msg chatCreatedMsg) tea.Cmd {
	r := m.run
	if r == nil || r.ID != msg.run {
		return nil
	}
	if msg.err != nil || r.Cancelling {
		// Nothing was asked: hand the words back.
		m.run = nil
		if r.vid != m.chat.VID {
			return nil
		}
		if msg.err != nil {
			m.chat.Failure = "could not start the chat: " + msg.err.Error()
		} else {
			m.chat.Chat, m.chat.Loaded = msg.chat, true
			m.notice = "cancelled before it was sent"
		}
		if m.input.value() == "" {
			m.input.set(r.Query)
		}
		return nil
	}
	r.chat = msg.chat.ID
	if r.vid == m.chat.VID {
		m.chat.Chat = msg.chat
		m.chat.Loaded = true
	}
	return m.startRun(r)
}

// stillAnswering begins the notices that refuse a send or a retry while a
// turn runs; the turn's end clears them.
const stillAnswering = "still answering"

// onTurn folds a batch of events in, and when the turn has ended puts
// its outcome in place, reloads the chat from the hub's log, and offers a
// pull when a model is missing.
func (m *Model) onTurn(msg turnMsg) tea.Cmd {
	r := m.run
	if r == nil || r.ID != msg.id {
		return nil
	}
	r.Apply(msg.events, m.bar.working)
	var reload tea.Cmd
	if m.mgr != nil && slices.ContainsFunc(msg.events, func(e hub.Event) bool { return e.Kind == hub.EventDecision }) {
		reload = m.mgr.Reload() // the manager shows what was just decided
	}
	if !msg.done {
		return tea.Batch(r.wait, reload)
	}
	m.run = nil
	if r.Cancelling && m.notice == "cancelling…" || strings.HasPrefix(m.notice, stillAnswering) {
		m.notice = "" // what it said is no longer true
	}
	here := r.vid == m.chat.VID || (r.chat != "" && r.chat == m.chat.Chat.ID)
	for app := range m.bar.working {
		m.bar.working[app] = false
	}
	if r.chat != "" && r.Seq != 0 {
		if m.extras[r.chat] == nil {
			m.extras[r.chat] = map[uint64]*chat.Extras{}
		}
		x := r.Extras
		x.Masked = r.result.Masked
		m.extras[r.chat][r.Seq] = &x
	}
	kept := m.keep(r)
	if here {
		if r.result.Seq != 0 {
			m.chat.Upsert(r.result)
			if r.err != nil && !kept && r.result.Status == memory.StatusOK && !errors.Is(r.err, context.Canceled) {
				// Answered, and something it needed failed (an app's
				// server that did not start): said, not dropped (a turn
				// that failed says so in its own place).
				m.notice = widget.OneLine(r.err.Error())
			}
		} else if r.err != nil && !kept {
			m.chat.Failure = r.err.Error()
		}
	}
	if errors.Is(r.err, hub.ErrNoChat) && r.result.Seq == 0 && !r.retry {
		// The chat was deleted elsewhere (another window, `chats rm`):
		// nothing was asked. The words come back, and enter sends them
		// in a new chat.
		if here {
			m.chat = m.newChatView(m.chat.Chat.Private)
			m.layout()
		}
		if m.input.value() == "" {
			m.input.set(r.Query)
		}
		m.notice = "this chat was deleted in another window or by `bulkhead chats rm` — your message is back in the input; enter sends it in a new chat"
		return reload
	}
	var cmd tea.Cmd
	if here && r.chat != "" {
		cmd = loadChat(m.b, r.chat)
	}
	var down *llm.UnreachableError
	if errors.As(r.err, &down) {
		cmd = tea.Batch(cmd, m.setupLost(r.err))
	}
	if model, ok := llm.IsModelMissing(r.err); ok && r.result.Seq != 0 {
		cmd = tea.Batch(cmd, m.openPull(model, pull.For{Chat: r.chat, Seq: r.result.Seq, Query: r.Query}))
	}
	return tea.Batch(cmd, reload)
}

func (m *Model) onChatLoaded(msg chatLoadedMsg) {
	if msg.id != m.chat.Chat.ID {
		return
	}
	if msg.err != nil {
		// Leave a usable new chat behind the message.
		m.chat = m.newChatView(false)
		m.layout()
		m.chat.Failure = fmt.Sprintf("could not open chat %s: %v", msg.id, msg.err)
		return
	}
	m.chat.Chat, m.chat.Loaded = msg.chat, true
	m.chat.SetNewest(msg.turns, msg.more)
}

// onOlder puts a page of older turns in front of the chat's; the view
// stays on what it showed.
func (m *Model) onOlder(msg olderMsg) {
	if msg.vid != m.chat.VID {
		return
	}
	m.chat.Paging = false
	if msg.err != nil {
		m.chat.Older = false // no retry on every frame; reopening the chat tries again
		m.notice = "could not read older turns: " + msg.err.Error()
		return
	}
	m.chat.AddOlder(msg.turns, msg.more, msg.before)
}

// newChat shows a fresh, empty chat; the hub hears of it on first send.
func (m *Model) newChat(private bool) tea.Cmd {
	m.chat = m.newChatView(private)
	m.layout()
	m.notice = ""
	if private {
		m.notice = "private chat: nothing is saved"
	}
	return warmNew(m.b)
}

func (m *Model) switchChat(id string) tea.Cmd {
	m.chat = m.newChatView(false)
	m.chat.Chat.ID = id
	m.layout()
	m.notice = ""
	return loadChat(m.b, id)
}

// revealedMsg answers the note that a masked span was revealed.
type revealedMsg struct{ err error }

// reveal shows the next masked span of the latest answer in this chat
// that has one, and writes to the action log that the user revealed it.
func (m *Model) reveal() tea.Cmd {
	id := m.chat.Chat.ID
	var seq uint64
	var x *chat.Extras
	for s, e := range m.extras[id] {
		if e != nil && e.Revealed < len(e.Masked) && s >= seq {
			seq, x = s, e
		}
	}
	if x == nil {
		m.notice = "nothing masked to reveal in this chat"
		return nil
	}
	sp := x.Masked[x.Revealed]
	x.Revealed++
	m.notice = "revealed masked text (" + widget.Clean(sp.Kind) + "); the action log records it"
	b := m.b
	return func() tea.Msg { return revealedMsg{err: b.NoteRevealed(id, seq, sp.Kind)} }
}
