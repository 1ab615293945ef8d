package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// hostile is model-authored text that would act on the terminal drawn
// raw: an OSC 52 clipboard write, a title change, a clear screen, an
// 8-bit CSI, a CR, an RLO and a zero-width space. visible is how each
// must be drawn instead.
const hostile = "copy\x1b]52;c;ZXZpbA==\a title\x1b]0;pwned\x07 clear\x1b[2J\x1b[H csi\u009b31m safe\rEVIL rlo\u202efdp.exe zw\u200bsp"

var visible = []string{`\x1b]52;c;ZXZpbA==\a`, `\x1b]0;pwned\a`, `\x1b[2J\x1b[H`, `\u009b31m`, `safe\rEVIL`, `\u202efdp.exe`, `zw\u200bsp`}

// checkDrawnVisibly fails if raw (a frame as written to the terminal)
// carries any of hostile's sequences or characters, or if the frame does
// not show each of them as a visible escape.
func checkDrawnVisibly(t *testing.T, what, raw string) {
	t.Helper()
	for _, bad := range []string{"\x1b]", "\x1b[2J", "\x1b[H", "\a", "\r", "\u009b", "\u202e", "\u200b"} {
		if strings.Contains(raw, bad) {
			t.Errorf("%s: %q reaches the terminal raw", what, bad)
		}
	}
	plain := ansi.Strip(raw)
	for _, v := range visible {
		if !strings.Contains(plain, v) {
			t.Errorf("%s: want %s drawn as a visible escape in\n%s", what, v, plain)
		}
	}
}

func TestModelTextIsDrawnWithVisibleEscapes(t *testing.T) {
	t.Parallel()
	// The answer arrives in chunks that cut the sequences in two.
	chunks := []string{hostile[:7], hostile[7:30], hostile[30:]}
	r := newRig(t, replies(
		ollamatest.Reply{Thinking: []string{hostile}, Chunks: chunks},
		ollamatest.Reply{Status: 500, Error: hostile},
	))
	d := newDriver(t, r.options(), 200, 60)
	d.ask("hello")
	d.key(ctrl('t')) // the thinking, expanded
	checkDrawnVisibly(t, "the answer and the thinking", d.m.View().Content)
	if n := strings.Count(ansi.Strip(d.m.View().Content), `\x1b]52;c;ZXZpbA==\a`); n != 2 {
		t.Errorf("want the answer and the thinking each to show the OSC 52 once, got %d", n)
	}

	d.ask("again")
	v := d.m.View().Content
	for _, bad := range []string{"\x1b]", "\x1b[2J", "\a", "\r", "\u009b", "\u202e", "\u200b"} {
		if strings.Contains(v, bad) {
			t.Errorf("a failed turn's error: %q reaches the terminal raw", bad)
		}
	}
	if !strings.Contains(ansi.Strip(v), `\x1b]0;pwned\a`) {
		t.Errorf("a failed turn's error must show the escapes:\n%s", ansi.Strip(v))
	}
}

func TestCleanShowsEscapesInsteadOfStrippingThem(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"\x1b[31mred\x1b[0m": `\x1b[31mred\x1b[0m`,
		"a\tb\nc":            "a    b\nc",
		"\x1b]0;pwned\a":     `\x1b]0;pwned\a`,
		"x\u202ey":           `x\u202ey`,
		"plain 東京 🚕 e\u0301": "plain 東京 🚕 e\u0301",
	} {
		if got := widget.Clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := widget.OneLine("a\nb\x1b[2J"); got != `a ⏎ b\x1b[2J` {
		t.Errorf("oneLine: %q", got)
	}
}
