package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/chat"
)

// The Cmds below are the only places the UI calls the hub outside a
// running turn; each returns one message for Update.

// chatCreatedMsg answers createChat: the chat made for a first send.
type chatCreatedMsg struct {
	chat hub.Chat
	run  int // the turn waiting for it
	err  error
}

func createChat(b Backend, private bool, run int) tea.Cmd {
	return func() tea.Msg {
		c, err := b.NewChat(private)
		return chatCreatedMsg{chat: c, run: run, err: err}
	}
}

// chatLoadedMsg answers loadChat: the chat and the newest page of its
// turns; more says older turns remain.
type chatLoadedMsg struct {
	id    string
	chat  hub.Chat
	turns []hub.Turn
	more  bool
	err   error
}

func loadChat(b Backend, id string) tea.Cmd {
	return func() tea.Msg {
		c, err := b.Chat(id)
		if err != nil {
			return chatLoadedMsg{id: id, err: err}
		}
		warm(b, id)
		turns, more, err := b.TurnsBefore(id, 0, chat.TurnsPage)
		return chatLoadedMsg{id: id, chat: c, turns: turns, more: more, err: err}
	}
}

// A backend that reads the planner's prompt ahead (serve.Client,
// hub.Operator.Warm): the first request of a chat just opened reads only
// its own words.
type warmer interface{ Warm(chat string) error }

// warm has b read the prompt of chat's next plan ("": a new chat's) ahead,
// where it can; it returns at once, and a failure costs only speed.
func warm(b Backend, chat string) {
	if w, ok := b.(warmer); ok {
		_ = w.Warm(chat)
	}
}

// warmNew is warm for the new chat the view opens on.
func warmNew(b Backend) tea.Cmd {
	return func() tea.Msg {
		warm(b, "")
		return nil
	}
}

// olderMsg answers loadOlder: the page of turns before seq before, for
// the chat view vid.
type olderMsg struct {
	vid    int
	before uint64
	turns  []hub.Turn
	more   bool
	err    error
}

func loadOlder(b Backend, vid int, id string, before uint64) tea.Cmd {
	return func() tea.Msg {
		turns, more, err := b.TurnsBefore(id, before, chat.TurnsPage)
		return olderMsg{vid: vid, before: before, turns: turns, more: more, err: err}
	}
}

// frameMsg advances the spinner while something runs.
type frameMsg struct{}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
