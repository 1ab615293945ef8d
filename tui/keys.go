package tui

import "charm.land/bubbles/v2/key"

// keyMap holds every binding the UI answers to. The root model checks
// these before the input sees a key, so they win over the textarea's own
// bindings (ctrl+n, ctrl+p, ctrl+t, ctrl+g, ctrl+a and ctrl+e mean
// something else there; home and end still go to the start and the end of
// the line).
type keyMap struct {
	Send     key.Binding
	Newline  key.Binding
	Cancel   key.Binding
	Retry    key.Binding
	Thinking key.Binding
	Chats    key.Binding
	NewChat  key.Binding
	Private  key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Perms    key.Binding
	Trusted  key.Binding
	Apps     key.Binding
	Memory   key.Binding
	Reveal   key.Binding
	Mouse    key.Binding
	Help     key.Binding
	Quit     key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Send:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send · ↑/↓ earlier prompts · ctrl+u clears the input")),
		Newline:  key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"), key.WithHelp("alt+enter", "new line (also shift+enter, ctrl+j)")),
		Cancel:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel the running answer / close")),
		Retry:    key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "retry the last unfinished turn")),
		Thinking: key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "show / hide thinking")),
		Chats:    key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "chats")),
		NewChat:  key.NewBinding(key.WithKeys("ctrl+n"), key.WithHelp("ctrl+n", "new chat")),
		Private:  key.NewBinding(key.WithKeys("ctrl+p"), key.WithHelp("ctrl+p", "new private chat")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup/pgdn", "scroll (or mouse wheel)")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "scroll down")),
		Perms:    key.NewBinding(key.WithKeys("ctrl+g"), key.WithHelp("ctrl+g", "permissions: grants and action log (/permissions)")),
		Trusted:  key.NewBinding(key.WithKeys("ctrl+y"), key.WithHelp("ctrl+y", "trusted session on / off (/trusted)")),
		Apps:     key.NewBinding(key.WithKeys("ctrl+a"), key.WithHelp("ctrl+a", "apps (/apps)")),
		Memory:   key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "memory: what the hub and each app remember (/memory)")),
		Reveal:   key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "show the next span the hub masked in an answer (logged)")),
		Mouse:    key.NewBinding(key.WithKeys("f2"), key.WithHelp("f2", "mouse on / off (wheel scrolls; shift+drag selects text)")),
		Help:     key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?", "help (when the input is empty; f1 always)")),
		Quit:     key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// help lists the bindings in the order the help overlay shows them
// (PageUp's line names pgdn too).
func (k keyMap) help() []key.Binding {
	return []key.Binding{k.Send, k.Newline, k.Cancel, k.Retry, k.Thinking, k.Chats, k.NewChat, k.Private, k.PageUp, k.Perms, k.Trusted, k.Apps, k.Memory, k.Reveal, k.Mouse, k.Help, k.Quit}
}

// permHelp is the permission dialog's key lines, for the help overlay.
var permHelp = []string{
	"dialog: answers count once you stop typing (typing goes to your message)",
	"  o once (a risky request: o, then enter) · s session · p permanently",
	"  d deny · n note · x long values whole · ↑/↓ pgup/pgdn scroll",
	"  after s or p, its limits: ←/→ choose · enter save · esc back",
}
