package headless

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/vt"

	"github.com/bulkhead-dev/bulkhead/hub"
)

// screen is a terminal a person reads: an emulator behind a tty's line
// discipline (a newline written is a carriage return and a newline).
type screen struct{ *vt.Emulator }

func newScreen(cols, rows int, before string) screen {
	s := screen{vt.NewEmulator(cols, rows)}
	s.WriteString(strings.ReplaceAll(before, "\n", "\r\n"))
	return s
}

func (s screen) Write(p []byte) (int, error) {
	_, err := s.Emulator.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n")))
	return len(p), err
}

// history is what the person can read: the lines scrolled off the
// screen, then the screen's, trailing blanks and blank last lines cut.
func (s screen) history() string {
	var out []string
	for _, l := range s.Scrollback().Lines() {
		out = append(out, strings.TrimRight(l.String(), " "))
	}
	for _, l := range strings.Split(s.String(), "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

func draftEvents(text string, pieces int) []hub.Event {
	var evs []hub.Event
	rs := []rune(text)
	for i := range pieces {
		evs = append(evs, hub.Event{Kind: hub.EventDraft, Text: string(rs[i*len(rs)/pieces : (i+1)*len(rs)/pieces])})
	}
	return evs
}

// Drafts in every width a terminal draws: scripts no code here names,
// wide and combining characters, emoji, tabs, escapes the sanitizer
// writes out, lines longer than the screen and more of them than the
// rows a preview holds.
var previewDrafts = []string{
	"Морето покрива по-голямата част от планетата; приливите му следват луната.",
	"海は地球の大部分を覆っている。潮の満ち引きは月に従い、最も深い海溝は一万メートルを超える。生き物の多くは光の届く浅い層に住む。",
	"바다는 지구의 대부분을 덮고 있습니다 🌊🐋🐙 그리고\tmore\ttabs\there\n\n\nand blank lines\n",
	"e\u0301e\u0301e\u0301 a\u0308o\u0308 ก\u0e33 क्षत्रिय \u202eevil\u202c \x1b[2J\x1b]0;t\a" + strings.Repeat("long line without a break ", 12),
	strings.Repeat("line\n", 20),
}

var sizes = []TermSize{{Cols: 80, Rows: 24}, {Cols: 23, Rows: 9}, {Cols: 11, Rows: 4}, {Cols: 7, Rows: 2}}

// before is what the terminal showed before the turn: a command, and
// with full as many lines before it as fill the screen.
func before(size TermSize, full bool) string {
	b := "$ bulkhead ask --stream 'write me a story'\n"
	if full {
		for k := range size.Rows + 3 {
			b = fmt.Sprintf("earlier %d\n", k) + b
		}
	}
	return b
}

// A draft shown on a terminal and withdrawn leaves no trace: what the
// person can read, scrolled off or on the screen, is what the same turn
// shows with no draft at all — whatever the draft's script, width or
// length, and wherever on the screen it began (the top, or the bottom so
// that it scrolls).
func TestAWithdrawnDraftLeavesNothingOnTheTerminal(t *testing.T) {
	app := &hub.Plan{Steps: []hub.Step{{ID: "s1", Functionality: "writing.story", App: "creative_muse"}}}
	answer := []hub.Event{{Kind: hub.EventPlan, Plan: app},
		{Kind: hub.EventToken, By: hub.ByApp, App: "creative_muse", Text: "Once upon a time"},
		{Kind: hub.EventAnswer, Text: "Once upon a time"}}
	for _, size := range sizes {
		for _, full := range []bool{false, true} {
			want := newScreen(size.Cols, size.Rows, before(size, full))
			if err := Run(context.Background(), scripted{events: answer}, "q", Options{Stream: true, Terminal: size}, want, io.Discard); err != nil {
				t.Fatal(err)
			}
			for i, d := range previewDrafts {
				scr := newScreen(size.Cols, size.Rows, before(size, full))
				evs := append(append(draftEvents(d, 7), hub.Event{Kind: hub.EventDraftWithdrawn}), answer...)
				if err := Run(context.Background(), scripted{events: evs}, "q", Options{Stream: true, Terminal: size}, scr, io.Discard); err != nil {
					t.Fatal(err)
				}
				if got := scr.history(); got != want.history() {
					t.Fatalf("%v, full %v, draft %d: the terminal reads\n%s\n\nwhere the turn without a draft reads\n%s", size, full, i, got, want.history())
				}
			}
		}
	}
}

// A draft the plan keeps is the answer: its words shown once, in order,
// what the rows could not hold after what they did, then the rest of the
// answer — what the person reads is what the same answer printed on a
// pipe reads, where nothing is shown before the plan.
func TestAKeptDraftIsTheAnswerOnce(t *testing.T) {
	chat := &hub.Plan{Steps: []hub.Step{{ID: "s1", Functionality: "chat", App: hub.VanillaApp}}}
	for _, size := range sizes {
		for _, full := range []bool{false, true} {
			for i, d := range previewDrafts {
				evs := append(draftEvents(d, 9), hub.Event{Kind: hub.EventPlan, Plan: chat},
					hub.Event{Kind: hub.EventToken, Text: " END"}, hub.Event{Kind: hub.EventAnswer, Text: d + " END"})
				var pipe bytes.Buffer
				if err := Run(context.Background(), scripted{events: evs}, "q", Options{Stream: true}, &pipe, io.Discard); err != nil {
					t.Fatal(err)
				}
				onPipe := newScreen(size.Cols, size.Rows, before(size, full))
				onPipe.Write(pipe.Bytes())
				scr := newScreen(size.Cols, size.Rows, before(size, full))
				if err := Run(context.Background(), scripted{events: evs}, "q", Options{Stream: true, Terminal: size}, scr, io.Discard); err != nil {
					t.Fatal(err)
				}
				if got, want := scr.history(), onPipe.history(); got != want {
					t.Fatalf("%v, full %v, draft %d: the terminal reads\n%s\n\nwhere the same answer on a pipe reads\n%s", size, full, i, got, want)
				}
				if !strings.HasSuffix(strings.ReplaceAll(scr.history(), "\n", ""), "END") {
					t.Fatalf("%v draft %d: the answer's end is missing:\n%s", size, i, scr.history())
				}
			}
		}
	}
}

// A turn that fails while its draft is shown takes the draft back: the
// error is what the person reads, not an answer that never was.
func TestAFailedTurnTakesItsDraftBack(t *testing.T) {
	scr := newScreen(40, 10, "$ ask\n")
	var errOut bytes.Buffer
	evs := append(draftEvents("The sea is wide and deep.", 3), hub.Event{Kind: hub.EventError, Err: errors.New("the model server went away")})
	err := Run(context.Background(), scripted{events: evs, err: errors.New("the model server went away")}, "q", Options{Stream: true, Terminal: TermSize{Cols: 40, Rows: 10}}, scr, &errOut)
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err = %v, want ErrFailed", err)
	}
	if strings.Contains(scr.String(), "sea") || !strings.Contains(errOut.String(), "went away") {
		t.Fatalf("screen:\n%s\nstderr: %s", scr.String(), errOut.String())
	}
	// And one whose plan never came (the turn cut off): the same.
	scr = newScreen(40, 10, "$ ask\n")
	_ = Run(context.Background(), scripted{events: draftEvents("The sea is wide and deep.", 3), err: context.Canceled}, "q", Options{Stream: true, Terminal: TermSize{Cols: 40, Rows: 10}}, scr, io.Discard)
	if strings.Contains(scr.String(), "sea") {
		t.Fatalf("a draft whose plan never came is still shown:\n%s", scr.String())
	}
}
