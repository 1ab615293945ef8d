package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// scripted is a Backend whose one turn emits events and returns err.
type scripted struct {
	events []hub.Event
	err    error
}

func (s scripted) NewChat(bool) (hub.Chat, error)   { return hub.Chat{ID: "c1"}, nil }
func (s scripted) Chat(id string) (hub.Chat, error) { return hub.Chat{ID: id}, nil }
func (s scripted) TurnsBefore(string, uint64, int) ([]hub.Turn, bool, error) {
	return nil, false, nil
}
func (s scripted) Ask(ctx context.Context, chat, q string, emit func(hub.Event)) (hub.Turn, error) {
	return s.AskWith(ctx, chat, q, hub.AskOptions{}, emit)
}
func (s scripted) Retry(context.Context, string, uint64, func(hub.Event)) (hub.Turn, error) {
	return hub.Turn{}, errors.New("no retry")
}
func (s scripted) AskWith(_ context.Context, _, _ string, _ hub.AskOptions, emit func(hub.Event)) (hub.Turn, error) {
	for _, e := range s.events {
		emit(e)
	}
	return hub.Turn{}, s.err
}

const hostile = "copy\x1b]52;c;ZXZpbA==\a title\x1b]0;pwned\x07 clear\x1b[2J\x1b[H rlo\u202eexe 東京"

// tokens cuts hostile into pieces that split the ESC sequences, and with
// splitRune the three bytes of 東 too (the hub's tokens are whole runes,
// but text output must not depend on it).
func tokens(splitRune bool) []hub.Event {
	var evs []hub.Event
	cut := strings.Index(hostile, "東")
	if splitRune {
		cut++
	}
	for _, piece := range []string{hostile[:6], hostile[6:20], hostile[20:cut], hostile[cut:]} {
		evs = append(evs, hub.Event{Kind: hub.EventToken, Text: piece})
	}
	return evs
}

const shown = `copy\x1b]52;c;ZXZpbA==\a title\x1b]0;pwned\a clear\x1b[2J\x1b[H rlo\u202eexe 東京`

func TestTextOutputShowsEscapesVisibly(t *testing.T) {
	t.Parallel()
	answer := hub.Event{Kind: hub.EventAnswer, Text: hostile}
	failed := hub.Event{Kind: hub.EventError, Text: hostile, Err: errors.New("model said " + hostile)}
	tests := []struct {
		name          string
		opts          Options
		events        []hub.Event
		err           error
		out, errOut   string
		wantErrFailed bool
	}{
		{"answer", Options{}, []hub.Event{answer}, nil, shown + "\n", "", false},
		{"stream", Options{Stream: true}, append(tokens(true), answer), nil, shown + "\n", "", false},
		{"partial answer and error", Options{}, []hub.Event{failed}, errors.New("x"), shown + "\n", "bulkhead: model said " + shown + "\n", true},
		{"streamed, then an error", Options{Stream: true}, append(tokens(true), failed), errors.New("x"), shown + "\n", "bulkhead: model said " + shown + "\n", true},
		{"a rune that never ends", Options{Stream: true}, []hub.Event{{Kind: hub.EventToken, Text: "ok \xe6\x9d"}}, nil, `ok \xe6\x9d`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := Run(context.Background(), scripted{tt.events, tt.err}, "q", tt.opts, &out, &errOut)
			if errors.Is(err, ErrFailed) != tt.wantErrFailed {
				t.Fatalf("Run: %v", err)
			}
			if out.String() != tt.out || errOut.String() != tt.errOut {
				t.Fatalf("out %q\nerr %q\nwant out %q\nerr %q", out.String(), errOut.String(), tt.out, tt.errOut)
			}
		})
	}
}

func TestJSONOutputEscapesWhatEncodingJSONLeavesRaw(t *testing.T) {
	t.Parallel()
	args := json.RawMessage("{\"to\":\"\u202eevil\u0085\"}")
	events := append(tokens(false),
		hub.Event{Kind: hub.EventPermission, Permission: &permissions.Request{ID: "r1", Kind: permissions.KindExec, Subject: "hub", Object: "mail", Args: args, Detail: hostile, Warning: "zw\u200bsp"}},
		hub.Event{Kind: hub.EventAppCall, App: "mail", Function: "send", Args: args},
		hub.Event{Kind: hub.EventAnswer, Text: hostile})
	var out bytes.Buffer
	if err := Run(context.Background(), scripted{events: events}, "q", Options{JSON: true, Stream: true}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, r := range out.String() {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r == '\u202e' || r == '\u200b') {
			t.Fatalf("%U raw in the JSON lines:\n%s", r, out.String())
		}
	}
	var texts []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if ev.Type == "token" {
			texts = append(texts, ev.Text)
		}
		// What a consumer decodes holds no control either: the app's
		// escapes arrive as visible text.
		if ev.Type == "answer" && ev.Text != termtext.Sanitize(hostile) {
			t.Fatalf("answer decodes to %q, want %q", ev.Text, termtext.Sanitize(hostile))
		}
		for _, r := range ev.Text + ev.Detail + ev.Warning + string(ev.Args) {
			if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r == '\u202e' || r == '\u200b') {
				t.Fatalf("%U in what %s decodes to", r, line)
			}
		}
	}
	if strings.Join(texts, "") != termtext.Sanitize(hostile) {
		t.Fatalf("tokens decode to %q", strings.Join(texts, ""))
	}
}

// longChat is a Backend holding a chat of many turns whose last one was
// cut; it records what --retry reads and runs.
type longChat struct {
	scripted
	turns   int
	read    []string // the reads, as "TurnsBefore(before, n)"
	retried uint64
}

func (l *longChat) Turns(string) ([]hub.Turn, error) {
	l.read = append(l.read, "Turns")
	return nil, errors.New("--retry must not read the whole chat")
}

func (l *longChat) TurnsBefore(_ string, before uint64, n int) ([]hub.Turn, bool, error) {
	l.read = append(l.read, fmt.Sprintf("TurnsBefore(%d, %d)", before, n))
	if before != 0 || n != 1 {
		return nil, false, errors.New("want the newest turn alone")
	}
	return []hub.Turn{{Seq: uint64(l.turns), Status: memory.StatusCut}}, l.turns > 1, nil
}

func (l *longChat) Retry(_ context.Context, _ string, seq uint64, emit func(hub.Event)) (hub.Turn, error) {
	l.retried = seq
	emit(hub.Event{Kind: hub.EventAnswer, Text: "whole"})
	return hub.Turn{Seq: seq, Status: memory.StatusOK, Answer: "whole"}, nil
}

// --retry finds the chat's last turn by reading that turn alone.
func TestRetryReadsTheLastTurnAlone(t *testing.T) {
	t.Parallel()
	b := &longChat{turns: 10_000}
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), b, "", Options{Chat: "c1", Retry: true}, &out, &errOut); err != nil {
		t.Fatalf("Run --retry: %v (%s)", err, errOut.String())
	}
	if want := []string{"TurnsBefore(0, 1)"}; !slices.Equal(b.read, want) || b.retried != 10_000 || out.String() != "whole\n" {
		t.Errorf("reads %v, retried turn %d, printed %q; want %v, turn 10000, \"whole\\n\"", b.read, b.retried, out.String(), want)
	}
}

// A streamed draft is printed once the plan keeps it, never when it is
// withdrawn (text on a pipe cannot be taken back); --json has it, with
// the chat, as the hub sent it — and escaped like every line.
func TestDraftsPrintOnceKept(t *testing.T) {
	chat := &hub.Plan{Steps: []hub.Step{{ID: "s1", Functionality: "chat", App: hub.VanillaApp}}}
	app := &hub.Plan{Steps: []hub.Step{{ID: "s1", Functionality: "writing.story", App: "creative_muse"}}}
	kept := scripted{events: []hub.Event{
		{Kind: hub.EventDraft, Text: "Hel"}, {Kind: hub.EventDraft, Text: "lo\x1b[2J"}, {Kind: hub.EventPlan, Plan: chat},
		{Kind: hub.EventToken, Text: " there"}, {Kind: hub.EventAnswer, Text: "Hello\x1b[2J there"}}}
	withdrawn := scripted{events: []hub.Event{
		{Kind: hub.EventDraft, Text: "A guess"}, {Kind: hub.EventDraftWithdrawn}, {Kind: hub.EventPlan, Plan: app},
		{Kind: hub.EventToken, Text: "A story"}, {Kind: hub.EventAnswer, Text: "A story"}}}
	for _, c := range []struct {
		b    scripted
		want string
	}{{kept, `Hello\x1b[2J there` + "\n"}, {withdrawn, "A story\n"}} {
		var out, errOut bytes.Buffer
		if err := Run(context.Background(), c.b, "q", Options{Stream: true}, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Fatalf("--stream printed %q, want %q", out.String(), c.want)
		}
	}
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), withdrawn, "q", Options{Stream: true, JSON: true}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var first, second map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	_ = json.Unmarshal([]byte(lines[1]), &second)
	if first["type"] != "draft" || first["chat"] != "c1" || first["text"] != "A guess" || second["type"] != "draft_withdrawn" {
		t.Fatalf("--json --stream: %s", out.String())
	}
}

// optsOf is a Backend that keeps the options of the turn it is asked.
type optsOf struct {
	scripted
	got *hub.AskOptions
}

func (o optsOf) AskWith(ctx context.Context, chat, q string, opts hub.AskOptions, emit func(hub.Event)) (hub.Turn, error) {
	*o.got = opts
	return o.scripted.AskWith(ctx, chat, q, opts, emit)
}

// Only a client that shows a draft's words before the plan (a JSON
// stream, streamed text on a terminal) asks for the planner to wait for
// them: text on a pipe, streamed or not, text not streamed and JSON
// without a stream are undrafted.
func TestOnlyAClientThatCanTakeItBackShowsADraft(t *testing.T) {
	term := TermSize{Cols: 80, Rows: 24}
	for _, c := range []struct {
		opts      Options
		undrafted bool
	}{
		{Options{}, true}, {Options{Stream: true}, true}, {Options{JSON: true}, true}, {Options{JSON: true, Stream: true}, false},
		{Options{Terminal: term}, true}, {Options{Stream: true, Terminal: term}, false}, {Options{Stream: true, Terminal: TermSize{Cols: 80, Rows: 1}}, true},
	} {
		var got hub.AskOptions
		b := optsOf{scripted: scripted{events: []hub.Event{{Kind: hub.EventAnswer, Text: "ok"}}}, got: &got}
		if err := Run(context.Background(), b, "hello", c.opts, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		if got.Undrafted != c.undrafted {
			t.Fatalf("%+v: undrafted %v, want %v", c.opts, got.Undrafted, c.undrafted)
		}
	}
}
