package tui

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// ↑ on the first line recalls the chat's earlier prompts, newest first;
// ↓ goes back down and, past the newest, gives back the draft typed
// before recall began; typing over a recalled prompt makes it the draft.
func TestPromptRecall(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	d := newDriver(t, r.options(), 80, 24)
	d.ask("first question")
	d.ask("second question")
	d.typeText("half a thou")
	in := func() string { return d.model().input.value() }
	d.key(keyUp)
	if got := in(); got != "second question" {
		t.Fatalf("↑: %q", got)
	}
	d.key(keyUp)
	if got := in(); got != "first question" {
		t.Fatalf("↑↑: %q", got)
	}
	d.key(keyUp) // the oldest stays
	if got := in(); got != "first question" {
		t.Fatalf("↑↑↑: %q", got)
	}
	d.key(keyDown)
	d.key(keyDown)
	if got := in(); got != "half a thou" {
		t.Fatalf("↓↓ past the newest gives the draft back: %q", got)
	}
	d.key(keyUp)
	d.typeText(" again")
	d.key(keyEnter)
	d.idle()
	turns := d.model().chat.Turns
	if q := turns[len(turns)-1].Query; q != "second question again" {
		t.Fatalf("sent %q", q)
	}
}

// ctrl+u clears the whole draft, every line of it, so that nothing of it
// goes out with the next message.
func TestCtrlUClearsTheDraft(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	d := newDriver(t, r.options(), 80, 24)
	d.typeText("line one")
	d.key(keyAltEnter)
	d.typeText("line two")
	if v := d.model().input.value(); !strings.Contains(v, "\n") {
		t.Fatalf("no second line: %q", v)
	}
	d.send(ctrl('u'))
	if v := d.model().input.value(); v != "" {
		t.Fatalf("ctrl+u left %q", v)
	}
	d.ask("fresh")
	turns := d.model().chat.Turns
	if q := turns[len(turns)-1].Query; q != "fresh" {
		t.Fatalf("sent %q", q)
	}
}

// A chat deleted in another window: the next message is not lost — it is
// back in the input, the window says why, and enter sends it in a new
// chat.
func TestChatDeletedElsewhereKeepsTheMessage(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	d := newDriver(t, r.options(), 100, 24)
	d.ask("hello there")
	old := d.model().chat.Chat.ID
	if err := r.op.DeleteChat(old); err != nil {
		t.Fatal(err)
	}
	d.ask("my important follow-up")
	m := d.model()
	if got := m.input.value(); got != "my important follow-up" {
		t.Fatalf("the message was lost: input %q", got)
	}
	if !strings.Contains(m.notice, "deleted") || !strings.Contains(m.notice, "new chat") {
		t.Fatalf("notice %q", m.notice)
	}
	d.key(keyEnter)
	d.idle()
	m = d.model()
	if m.chat.Chat.ID == old || m.chat.Chat.ID == "" || len(m.chat.Turns) != 1 || m.chat.Turns[0].Query != "my important follow-up" {
		t.Fatalf("not sent in a new chat: %+v %+v", m.chat.Chat, m.chat.Turns)
	}
}
