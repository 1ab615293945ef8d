package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Hello, world.", "Hello, world."},
		{"newlines and tabs", "a\tb\nc\n", "a\tb\nc\n"},
		{"emoji", "fares 🚕 👍🏽 ✈️", "fares 🚕 👍🏽 ✈️"},
		{"CJK", "東京から大阪まで　한국어", "東京から大阪まで　한국어"},
		{"combining marks", "e\u0301 n\u0303 \u0915\u094d\u0937", "e\u0301 n\u0303 \u0915\u094d\u0937"},
		{"right-to-left script", "שלום مرحبا", "שלום مرحبا"},
		{"backslash left alone", `C:\x1b\new`, `C:\x1b\new`},
		{"replacement character kept", "a\ufffdb", "a\ufffdb"},
		{"OSC 52 clipboard write", "copy \x1b]52;c;ZXZpbA==\a done", `copy \x1b]52;c;ZXZpbA==\a done`},
		{"OSC 52 with ST", "\x1b]52;c;ZXZpbA==\x1b\\", `\x1b]52;c;ZXZpbA==\x1b\`},
		{"title change", "\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"SGR colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"8-bit CSI", "\u009b2J", `\u009b2J`},
		{"8-bit OSC and ST", "\u009d0;x\u009c", `\u009d0;x\u009c`},
		{"DCS", "\x1bP+q\x1b\\", `\x1bP+q\x1b\`},
		{"CR overwrite", "safe\rEVIL", `safe\rEVIL`},
		{"CRLF", "a\r\nb", "a\\r\nb"},
		{"backspace", "abc\b\b\bxyz", `abc\b\b\bxyz`},
		{"other C0", "\x00\x01\x0b\x0c\x1f", `\x00\x01\v\f\x1f`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"RLO", "invoice\u202eexe.pdf", `invoice\u202eexe.pdf`},
		{"bidi isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"bidi embeddings", "\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`},
		{"ZWSP", "pay\u200bpal", `pay\u200bpal`},
		{"zero-width joiners", "\u200c\u200d\u2060\u2064\ufeff", `\u200c\u200d\u2060\u2064\ufeff`},
		{"soft hyphen and Mongolian separator", "a\u00adb\u180ec", `a\u00adb\u180ec`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"tag character", "x\U000E0041", `x\U000e0041`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"encoded C1 as raw byte", "\x9b2J", `\x9b2J`},
		{"overlong encoding of ESC", "\xc0\x9b", `\xc0\x9b`},
		{"surrogate half", "\xed\xa0\x80", `\xed\xa0\x80`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := Sanitize(Sanitize(tt.in)); got != tt.want {
				t.Errorf("Sanitize is not idempotent on %q: %q", tt.in, got)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain value", "plain value"},
		{"May 3\n2024-01-01  #9  exec  forged", `May 3\n2024-01-01  #9  exec  forged`},
		{"a\tb", `a\tb`},
		{"\x1b]0;t\a", `\x1b]0;t\a`},
	}
	for _, tt := range tests {
		if got := OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSanitizeReturnsCleanTextAsItIs(t *testing.T) {
	s := strings.Repeat("clean text, 東京 🚕\n", 10)
	if allocs := testing.AllocsPerRun(100, func() { _ = Sanitize(s) }); allocs != 0 {
		t.Fatalf("%v allocations for text with nothing to escape", allocs)
	}
}

func TestWriterKeepsRunesSplitAcrossWrites(t *testing.T) {
	t.Parallel()
	in := "naïve 東京 🚕 \x1b]52;c;ZXZpbA==\a \u202eend \u009b"
	want := Sanitize(in)
	// Every way of cutting the input into two or three pieces gives the
	// same output as sanitizing it whole.
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var out bytes.Buffer
			w := NewWriter(&out)
			for _, piece := range []string{in[:i], in[i:j], in[j:]} {
				if n, err := w.Write([]byte(piece)); err != nil || n != len(piece) {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("cut at %d and %d: %q, want %q", i, j, out.String(), want)
			}
		}
	}
}

func TestWriterByteByByte(t *testing.T) {
	t.Parallel()
	in := "🚕\xe2\x80\xae\xf0\x9f\x98 tail \xe6\x9d"
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := range len(in) {
		w.Write([]byte{in[i]})
	}
	if strings.Contains(out.String(), "tail") == false {
		t.Fatalf("held more than an incomplete rune: %q", out.String())
	}
	w.Flush()
	if want := `🚕\u202e\xf0\x9f\x98 tail \xe6\x9d`; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	type ev struct {
		Text string          `json:"text"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	tests := []struct {
		name string
		in   ev
		want string // a substring of the line
	}{
		{"C1", ev{Text: "a\u009b2Jb"}, `a\\u009b2Jb`},
		{"RLO", ev{Text: "\u202eexe"}, `\\u202eexe`},
		{"ZWSP and BOM", ev{Text: "a\u200bb\ufeff"}, `a\\u200bb\\ufeff`},
		{"DEL", ev{Text: "a\x7f"}, `a\\x7f`},
		{"ESC (encoding/json)", ev{Text: "\x1b]52;c;eA==\a"}, `\\x1b]52;c;eA==\\a`},
		{"tag character", ev{Text: "\U000E0041"}, `\\U000e0041`},
		{"raw message", ev{Args: json.RawMessage("{\"to\":\"\u202eevil\u0085\"}")}, `{"to":"\\u202eevil\\u0085"}`},
		{"an escaped backslash stays", ev{Text: `a\u001bb`}, `a\\u001bb`},
		{"plain", ev{Text: "東京 🚕 ok"}, `東京 🚕 ok`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got := JSON(raw)
			if !strings.Contains(string(got), tt.want) {
				t.Errorf("JSON(%s) = %s, want it to contain %s", raw, got, tt.want)
			}
			checkTerminalSafe(t, string(got), true)
			var a, b any
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &b); err != nil {
				t.Fatalf("%s is no longer JSON: %v", got, err)
			}
			// What it decodes to is the data with Sanitize's escapes for
			// what a terminal would act on: no control reaches a consumer.
			if ja, jb := mustMarshal(t, sanitized(a)), mustMarshal(t, b); ja != jb {
				t.Errorf("decodes to %s, want %s", jb, ja)
			}
		})
	}
}

func TestJSONInvalidUTF8AndCR(t *testing.T) {
	t.Parallel()
	in := []byte("{\"a\":\"x\xffy\"}\r\n")
	got := JSON(in)
	if want := "{\"a\":\"x\\\\xffy\"} \n"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	var b map[string]string
	if json.Unmarshal(got, &b) != nil || b["a"] != `x\xffy` {
		t.Fatalf("decodes to %q", b)
	}
}

func TestJSONWriter(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	enc := json.NewEncoder(NewJSONWriter(&out))
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]string{"v": "\u202e\u0085"}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"v\": \"\\\\u202e\\\\u0085\"\n}\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkTerminalSafe fails unless s is valid UTF-8 with no byte below 0x20
// but newline and tab, no DEL, no C1 control, no format character and no
// line or paragraph separator.
func checkTerminalSafe(t *testing.T, s string, keepNewlines bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("not valid UTF-8: %q", s)
	}
	for _, r := range s {
		ok := r >= 0x20 && r != 0x7f && !(r >= 0x80 && r <= 0x9f) && !unicode.Is(unicode.Cf, r) && r != '\u2028' && r != '\u2029'
		if keepNewlines && (r == '\n' || r == '\t') {
			ok = true
		}
		if !ok {
			t.Fatalf("%U left raw in %q", r, s)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"", "plain", "\x1b]52;c;ZXZpbA==\a", "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\u009b2J", "\u202e", "a\u200bb",
		"safe\rEVIL", "\xff\xc3", "🚕 東京 e\u0301\t\n", "\U000E0041", "\xf0\x9f\x98",
	} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		got := Sanitize(s)
		checkTerminalSafe(t, got, true)
		if Sanitize(got) != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, Sanitize(got))
		}
		if strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Fatalf("newlines changed: %q → %q", s, got)
		}
		checkTerminalSafe(t, OneLine(s), false)

		// The streaming form agrees with the whole-string one.
		var out bytes.Buffer
		w := NewWriter(&out)
		i := int(cut) % (len(s) + 1)
		w.Write([]byte(s[:i]))
		w.Write([]byte(s[i:]))
		w.Flush()
		if out.String() != got {
			t.Fatalf("written in two pieces at %d: %q, want %q", i, out.String(), got)
		}

		// JSON keeps the data and leaves nothing raw.
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		safe := JSON(raw)
		checkTerminalSafe(t, string(safe), false)
		var a, b string // encoding/json already made invalid UTF-8 U+FFFD
		if json.Unmarshal(raw, &a) != nil || json.Unmarshal(safe, &b) != nil || b != Sanitize(a) {
			t.Fatalf("JSON decodes to %q, want Sanitize's %q", b, Sanitize(a))
		}
	})
}

// sanitized is v with Sanitize applied to every string.
func sanitized(v any) any {
	switch t := v.(type) {
	case string:
		return Sanitize(t)
	case []any:
		for i := range t {
			t[i] = sanitized(t[i])
		}
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			out[Sanitize(k)] = sanitized(x)
		}
		return out
	}
	return v
}
