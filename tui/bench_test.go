package tui

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// fakeBackend is a hand-written fake of the hub that serves one stored
// chat of N turns from memory, quickly, so that a benchmark measures the
// UI and not the store. It counts the pages of turns read; ask, when
// set, runs a query (else AskWith waits for its ctx to end).
type fakeBackend struct {
	chat hub.Chat
	ask  func(ctx context.Context, query string, emit func(hub.Event)) (hub.Turn, error)

	mu    sync.Mutex
	turns []hub.Turn // by ascending Seq
	pages int        // calls of TurnsBefore
}

func newFakeBackend(n int) *fakeBackend {
	f := &fakeBackend{chat: hub.Chat{ID: "c0ffee", Title: "a long chat", Created: time.Unix(1e9, 0), Updated: time.Unix(1e9, 0)}}
	for i := range n {
		f.turns = append(f.turns, fakeTurn(f.chat.ID, uint64(i+1)))
	}
	return f
}

// fakeTurn is a logged turn with a Markdown answer of a usual size: a
// heading, a paragraph, a list and, in one turn of four, a code block.
func fakeTurn(chat string, seq uint64) hub.Turn {
	var a strings.Builder
	fmt.Fprintf(&a, "## Answer %d\n\nHere is what I found about item %d. ", seq, seq)
	a.WriteString(strings.Repeat("The quick brown fox jumps over the lazy dog, and the answer goes on for a while. ", 3))
	a.WriteString("\n\n- first point, with `code`\n- second point\n- third point\n")
	if seq%4 == 0 {
		a.WriteString("\n```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n")
	}
	at := time.Unix(1e9, 0).Add(time.Duration(seq) * time.Minute)
	return hub.Turn{
		Chat: chat, Seq: seq, Query: fmt.Sprintf("question number %d: tell me about item %d", seq, seq),
		Answer: a.String(), Status: memory.StatusOK, Started: at, Ended: at.Add(time.Second),
	}
}

// add logs t as the chat's next turn and returns it with its Seq.
func (f *fakeBackend) add(t hub.Turn) hub.Turn {
	f.mu.Lock()
	defer f.mu.Unlock()
	t.Chat, t.Seq = f.chat.ID, uint64(len(f.turns)+1)
	f.turns = append(f.turns, t)
	return t
}

func (f *fakeBackend) pagesRead() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pages
}

func (f *fakeBackend) NewChat(bool) (hub.Chat, error) { return f.chat, nil }
func (f *fakeBackend) Chats() ([]hub.Chat, error)     { return []hub.Chat{f.chat}, nil }
func (f *fakeBackend) Chat(id string) (hub.Chat, error) {
	if id != f.chat.ID {
		return hub.Chat{}, hub.ErrNoChat
	}
	return f.chat, nil
}
func (f *fakeBackend) DeleteChat(string) error { return nil }

// TurnsBefore is hub.Operator.TurnsBefore over the fake's turns.
func (f *fakeBackend) TurnsBefore(_ string, before uint64, n int) ([]hub.Turn, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages++
	end := len(f.turns)
	if before > 0 {
		end = sort.Search(len(f.turns), func(i int) bool { return f.turns[i].Seq >= before })
	}
	start := max(end-n, 0)
	return append([]hub.Turn(nil), f.turns[start:end]...), start > 0, nil
}

func (f *fakeBackend) AskWith(ctx context.Context, _, query string, _ hub.AskOptions, emit func(hub.Event)) (hub.Turn, error) {
	if f.ask != nil {
		return f.ask(ctx, query, emit)
	}
	<-ctx.Done()
	return hub.Turn{}, ctx.Err()
}

func (f *fakeBackend) Retry(ctx context.Context, _ string, _ uint64, _ func(hub.Event)) (hub.Turn, error) {
	<-ctx.Done()
	return hub.Turn{}, ctx.Err()
}

func (f *fakeBackend) Working() []string                      { return nil }
func (f *fakeBackend) HubModel() string                       { return "hub-model" }
func (f *fakeBackend) MemoryOwners() ([]string, error)        { return nil, nil }
func (f *fakeBackend) Memory(string) (hub.OwnerMemory, error) { return hub.OwnerMemory{}, nil }
func (f *fakeBackend) Forget(string) error                    { return nil }
func (f *fakeBackend) NoteRevealed(string, uint64, string) error {
	return nil
}

// options opens the fake's chat.
func (f *fakeBackend) options() Options {
	return Options{Backend: f, Theme: "dark", Version: "v0.0.0-test", ResumeChat: f.chat.ID}
}

// settle runs cmd and every Cmd that follows from it on this goroutine,
// handing each message to Update, until none is left: Bubble Tea's loop
// without a terminal, for Cmds that end on their own (timers off).
func settle(m tea.Model, cmd tea.Cmd) tea.Model {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			var next tea.Cmd
			m, next = m.Update(msg)
			queue = append(queue, next)
		}
	}
	return m
}

// openChat is the UI opening b's chat at w×h, to its first frame.
func openChat(b Backend, id string, w, h int) (tea.Model, string) {
	m := New(Options{Backend: b, Theme: "dark", Version: "v0.0.0-test", ResumeChat: id})
	m.after = nil
	tm := settle(m, m.Init())
	tm = settle(tm, func() tea.Msg { return tea.WindowSizeMsg{Width: w, Height: h} })
	return tm, tm.View().Content
}

var benchSizes = []int{1, 1000, 10000}

// A keystroke in the input: Update and View, in chats of 1, 1k and 10k
// turns. Keys alternate a letter and backspace, so the input stays short.
func BenchmarkKeystroke(b *testing.B) {
	keys := []tea.Msg{tea.KeyPressMsg{Code: 'a', Text: "a"}, tea.KeyPressMsg{Code: tea.KeyBackspace}}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			f := newFakeBackend(n)
			m, first := openChat(f, f.chat.ID, 100, 32)
			if !strings.Contains(ansi.Strip(first), fmt.Sprintf("item %d", n)) {
				b.Fatalf("the first frame lacks the last turn:\n%s", first)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m, _ = m.Update(keys[i%2])
				_ = m.View()
				i++
			}
		})
	}
}

// One streamed chunk of an answer: Update with a batch of one token, and
// View, in chats of 1 and 10k turns; the answer is rendered on every
// chunk (no throttle) and kept under 2,000 bytes.
func BenchmarkStreamChunk(b *testing.B) {
	for _, n := range []int{1, 10000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			f := newFakeBackend(n)
			tm, _ := openChat(f, f.chat.ID, 100, 32)
			m := tm.(Model)
			m.throttle = 0
			m.nextID++
			r := newTurnRun(m.nextID, f.chat.ID, "stream something", 0, false)
			r.vid = m.chat.VID
			m.run = r
			b.ReportAllocs()
			tm = m
			for b.Loop() {
				if r.Answer.Len() > 2000 {
					r.Answer.Reset()
				}
				tm, _ = tm.Update(turnMsg{id: r.ID, events: []hub.Event{{Kind: hub.EventToken, Text: "word by word, "}}})
				if v := ansi.Strip(tm.View().Content); !strings.Contains(v, "word by word") {
					b.Fatalf("the chunk is not on screen:\n%s", v)
				}
			}
		})
	}
}

// Opening a chat of 1 and of 10k turns stored by a real hub.Operator in
// badger, to the first frame; retained-MB is the heap the open UI holds
// once it has drawn (after a GC), beyond what was live before.
func BenchmarkOpenChat(b *testing.B) {
	for _, n := range []int{1, 10000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			op, id := storedChat(b, n)
			b.ReportAllocs()
			var retained float64
			for b.Loop() {
				before := liveHeap()
				m, first := openChat(op, id, 100, 32)
				if !strings.Contains(ansi.Strip(first), fmt.Sprintf("item %d", n)) {
					b.Fatalf("the first frame lacks the last turn:\n%s", first)
				}
				retained = float64(liveHeap()-before) / (1 << 20)
				runtime.KeepAlive(m)
			}
			b.ReportMetric(retained, "retained-MB")
		})
	}
}

func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// storedChat is a hub.Operator over a fresh store holding one chat of n
// turns (fakeTurn's), appended to the hub's log as the hub would.
func storedChat(b *testing.B, n int) (*hub.Operator, string) {
	b.Helper()
	store, err := memory.Open(b.TempDir(), memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := store.CreateChat("a long chat")
	if err != nil {
		b.Fatal(err)
	}
	ns, err := store.Namespace("hub")
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		t := fakeTurn(c.ID, uint64(i+1))
		if _, err := ns.Append(c.ID, memory.Interaction{Input: t.Query, Output: t.Answer, Status: t.Status, Started: t.Started, Ended: t.Ended}); err != nil {
			b.Fatal(err)
		}
	}
	hm, err := llm.New(llm.Config{Host: "http://127.0.0.1:1", Model: "hub-model"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	op, err := hub.New(hub.Options{Store: store, HubModel: hm, SpokeModel: func(string) (spokes.Model, error) { return hm, nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		op.Close()
		store.Close()
	})
	return op, c.ID
}
