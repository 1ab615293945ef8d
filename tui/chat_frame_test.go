package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/tui/chat"
)

// made and held count the conversation's renderings (chat.Pane.Renderings).
func made(d *driver) int {
	m := d.model()
	n, _ := m.chat.Renderings()
	return n
}

func held(d *driver) int {
	m := d.model()
	_, n := m.chat.Renderings()
	return n
}

// frame is the conversation's lines on screen.
func frame(d *driver) []string {
	m := d.model()
	return m.chat.Frame()
}

// convLines is the conversation pane of the view (below the header).
func convLines(d *driver) []string {
	m := d.model()
	lines := strings.Split(d.view(), "\n")
	return lines[1 : 1+m.convHeight()]
}

// Opening a chat of 10,000 turns reads one page of them and renders only
// the turns on screen; a keystroke renders none, and a resize only what
// shows at the new width.
func TestLongChatRendersOnlyWhatShows(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(10000)
	d := newDriver(t, f.options(), 100, 32)
	d.until("question number 10000")
	m := d.model()
	if n := f.pagesRead(); n != 1 || len(m.chat.Turns) != chat.TurnsPage {
		t.Fatalf("opening read %d pages, holds %d turns; want one page of %d", n, len(m.chat.Turns), chat.TurnsPage)
	}
	opened, _ := m.chat.Renderings()
	if opened == 0 || opened > 8 {
		t.Fatalf("opening rendered %d turns; a 26-line pane shows two or three", opened)
	}
	d.typeText("hello there")
	d.key(tea.KeyPressMsg{Code: tea.KeyBackspace})
	if got := made(d); got != opened {
		t.Fatalf("typing rendered %d turns", got-opened)
	}
	d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	if got := made(d) - opened; got == 0 || got > 8 {
		t.Fatalf("a resize rendered %d turns", got)
	}
	if c := held(d); c > 2*chat.MaxRenderings {
		t.Fatalf("the cache holds %d renderings", c)
	}
}

// Scrolling up reads older pages before the screen gets to the first
// turn read, and a page landing does not move what the screen shows;
// scrolling back down follows the bottom again.
func TestScrollingUpReadsOlderPages(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(300)
	d := newDriver(t, f.options(), 100, 32)
	d.until("question number 300")
	for i := 0; !strings.Contains(d.view(), "question number 1:"); i++ {
		if i == 1000 {
			t.Fatalf("never got to the first turn; %d pages read", f.pagesRead())
		}
		before := convLines(d)
		d.key(keyPgUp)
		moved := convLines(d)
		if strings.Join(moved, "\n") == strings.Join(before, "\n") {
			t.Fatalf("page up %d did not move the view (%d turns read):\n%s", i, len(d.model().chat.Turns), d.view())
		}
		d.idle() // a page asked for lands
		if got := convLines(d); strings.Join(got, "\n") != strings.Join(moved, "\n") {
			t.Fatalf("a page of older turns moved the view:\nbefore:\n%s\nafter:\n%s", strings.Join(moved, "\n"), strings.Join(got, "\n"))
		}
	}
	m := d.model()
	if len(m.chat.Turns) != 300 || m.chat.Older || m.chat.Turns[0].Seq != 1 {
		t.Fatalf("holds %d turns from %d, older %v", len(m.chat.Turns), m.chat.Turns[0].Seq, m.chat.Older)
	}
	if n := f.pagesRead(); n != 5 { // 64+64+64+64+44
		t.Fatalf("read %d pages, want 5", n)
	}
	if m.chat.Follow {
		t.Fatal("scrolled to the top, the view still follows the bottom")
	}
	if top := convLines(d)[0]; !strings.Contains(top, "question number 1:") {
		t.Fatalf("at the top the first line is %q", top)
	}

	// The wheel moves three lines.
	d.key(keyPgDown)
	before := convLines(d)
	d.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	after := convLines(d)
	if strings.Join(after[:len(after)-3], "\n") != strings.Join(before[3:], "\n") {
		t.Fatalf("the wheel did not move three lines:\n%s\n---\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
	d.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if got := convLines(d); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Fatal("the wheel up did not come back")
	}

	for i := 0; !d.model().chat.Follow; i++ {
		if i == 1000 {
			t.Fatal("page down never got back to the bottom")
		}
		d.key(keyPgDown)
	}
	if lines := convLines(d); strings.TrimSpace(lines[len(lines)-1]) != "}" { // turn 300's code block
		t.Fatalf("at the bottom the last turn's end shows last:\n%s", d.view())
	}
}

// A turn asked in a long chat, scrolled up, keeps the older pages read:
// the reload after it reads only the newest page and merges it.
func TestReloadKeepsOlderPages(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(300)
	f.ask = func(_ context.Context, q string, emit func(hub.Event)) (hub.Turn, error) {
		t := f.add(hub.Turn{Query: q, Answer: "a short answer", Status: memory.StatusOK})
		emit(hub.Event{Kind: hub.EventStarted, Turn: t.Seq})
		emit(hub.Event{Kind: hub.EventAnswer, Turn: t.Seq, Text: t.Answer})
		return t, nil
	}
	d := newDriver(t, f.options(), 100, 32)
	for range 60 {
		d.key(keyPgUp)
		d.idle()
	}
	read := len(d.model().chat.Turns)
	if read <= chat.TurnsPage {
		t.Fatalf("scrolling up read no older page (%d turns)", read)
	}
	d.ask("one more question")
	m := d.model()
	if len(m.chat.Turns) != read+1 || m.chat.Turns[read].Query != "one more question" {
		t.Fatalf("after the turn: %d turns (had %d), last %q", len(m.chat.Turns), read, m.chat.Turns[len(m.chat.Turns)-1].Query)
	}
	if v := d.view(); !strings.Contains(v, "a short answer") || !m.chat.Follow {
		t.Fatalf("the answer shows at the bottom:\n%s", v)
	}
}

// A streamed answer in a chat of 10,000 turns shows after each chunk, and
// the frames while it streams render no finished turn again.
func TestStreamingIntoALongChat(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(10000)
	chunks := []string{"first piece of the answer, ", "then a second piece, ", "and the end."}
	next := make(chan struct{})
	f.ask = func(ctx context.Context, q string, emit func(hub.Event)) (hub.Turn, error) {
		seq := uint64(10001)
		emit(hub.Event{Kind: hub.EventStarted, Turn: seq})
		for _, c := range chunks {
			emit(hub.Event{Kind: hub.EventToken, Turn: seq, App: hub.VanillaApp, Text: c})
			select {
			case <-next:
			case <-ctx.Done():
				return hub.Turn{}, ctx.Err()
			}
		}
		answer := strings.Join(chunks, "")
		emit(hub.Event{Kind: hub.EventAnswer, Turn: seq, Text: answer})
		return f.add(hub.Turn{Query: q, Answer: answer, Status: memory.StatusOK}), nil
	}
	d := newDriver(t, f.options(), 100, 32)
	d.until("question number 10000")
	opened := made(d)
	d.typeText("stream into a long chat")
	d.key(keyEnter)
	for i := range chunks {
		want := strings.TrimSpace(strings.Join(chunks[:i+1], ""))
		d.until(want)
		if v := d.view(); !strings.Contains(v, "esc cancels") {
			t.Fatalf("chunk %d shows without the running turn's line:\n%s", i, v)
		}
		if got := made(d) - opened; got > 0 {
			t.Fatalf("streaming chunk %d rendered %d finished turns", i, got)
		}
		next <- struct{}{}
	}
	d.idle()
	if v := d.view(); !strings.Contains(v, "and the end.") || strings.Contains(v, "esc cancels") {
		t.Fatalf("final view:\n%s", v)
	}
	if n := len(d.model().chat.Turns); n != chat.TurnsPage+1 {
		t.Fatalf("after the turn the view holds %d turns, want the page read and the new one", n)
	}
}

// The frame is the old viewport's: the same lines for every position of
// a short chat, scrolled a line at a time with the wheel.
func TestFrameLinesMatchTheWholeConversation(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(12)
	d := newDriver(t, f.options(), 90, 20)
	m := d.model()
	all := m.chat.AllLines(m.drawCtx())
	h := m.convHeight()
	for y := len(all) - h; ; y -= 3 {
		y = max(y, 0)
		got := frame(d)
		if want := all[y : y+h]; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("at line %d of %d the frame differs:\n%s\n--- want\n%s", y, len(all), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if y == 0 {
			break
		}
		d.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	}
	if !strings.Contains(fmt.Sprint(frame(d)[0]), "question number 1:") {
		t.Fatalf("the top line is %q", frame(d)[0])
	}
}

// A turn that was answered while something it needed failed (an app's
// server that did not start) says what failed: the error is not dropped
// because the turn was recorded.
func TestAnAnsweredTurnsFailureIsSaid(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(1)
	f.ask = func(_ context.Context, q string, emit func(hub.Event)) (hub.Turn, error) {
		t := f.add(hub.Turn{Query: q, Answer: "answered without it", Status: memory.StatusOK})
		emit(hub.Event{Kind: hub.EventStarted, Turn: t.Seq})
		emit(hub.Event{Kind: hub.EventAnswer, Turn: t.Seq, Text: t.Answer})
		return t, errors.New("the MCP server bad failed to start (exit status 1): error: cannot open /etc/bad.toml")
	}
	d := newDriver(t, f.options(), 120, 32)
	d.ask("look it up with bad")
	v := d.view()
	if !strings.Contains(v, "answered without it") || !strings.Contains(v, "the MCP server bad failed to start") {
		t.Fatalf("the answer and what failed, both shown:\n%s", v)
	}
}
