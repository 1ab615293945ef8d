package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/tui/dialogs/chats"
)

// The root's side of the dialogs drawn over the chat (tui/dialogs/…):
// it opens them, routes their keys and messages, and acts on what they
// ask. The permission dialog's is in permit.go.

// openChats opens the chats dialog and reads the chats.
func (m *Model) openChats() tea.Cmd {
	var cmd tea.Cmd
	m.list, cmd = chats.New(m.th, chats.Config{
		Backend: m.b, Current: m.chat.Chat.ID, Folder: m.opts.Workspace, Width: m.width,
		Answering: m.answering,
	})
	m.overlay = overlayChats
	return cmd
}

// answering names the chat a turn runs in ("" when none).
func (m *Model) answering() string {
	if m.run == nil {
		return ""
	}
	return m.run.chat
}

// chatsKey hands a key to the chats dialog and acts on its outcome.
func (m *Model) chatsKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.list == nil {
		m.overlay = overlayNone
		return nil
	}
	cmd, out := m.list.Update(msg)
	if out.Close {
		m.overlay = overlayNone
		m.list = nil
	}
	switch {
	case out.New:
		return tea.Batch(cmd, m.newChat(out.Private))
	case out.Open != "":
		return tea.Batch(cmd, m.switchChat(out.Open))
	}
	return cmd
}

// onChatDeleted forgets what the UI kept of a deleted chat, opens a new
// chat when it was on screen, and has the chats dialog read the chats
// again.
func (m *Model) onChatDeleted(msg chats.Deleted) tea.Cmd {
	var opened tea.Cmd
	if msg.Err == nil {
		delete(m.extras, msg.ID)
		delete(m.kept, msg.ID)
		if msg.ID == m.chat.Chat.ID {
			opened = m.newChat(false)
		}
	}
	if m.list == nil {
		return opened
	}
	m.list.SetCurrent(m.chat.Chat.ID)
	cmd, _ := m.list.Update(msg)
	return tea.Batch(opened, cmd)
}
