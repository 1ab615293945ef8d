package memory

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// maskWrap keeps to its width and draws a masked span that wraps in the
// masked style on both lines.
func TestMaskWrap(t *testing.T) {
	t.Parallel()
	th := style.New(true)
	text := "one two " + guard.Marker() + " three \x1b[31mred\x1b[0m supercalifragilisticexpialidocious"
	for _, w := range []int{1, 5, 12, 20, 40, 200} {
		lines := maskWrap(th, text, w, "  ▪ ", "    ", th.Dim)
		for _, l := range lines {
			if lw := ansi.StringWidth(l); lw > w {
				t.Fatalf("at width %d a line is %d wide: %q", w, lw, l)
			}
			if strings.Contains(l, "\x1b[31m") {
				t.Fatal("an escape sequence from the text reached the terminal")
			}
		}
	}
	lines := maskWrap(th, text, 24, "", "", th.Dim)
	joined := ansi.Strip(strings.Join(lines, " "))
	if !strings.Contains(joined, "[masked: instruction-like") || !strings.Contains(joined, "text] three") {
		t.Fatalf("wrapped: %q", lines)
	}
	if len(lines) < 2 || !strings.Contains(lines[0], th.MaskedText().Render("[masked:")) ||
		!strings.Contains(lines[1], th.MaskedText().Render("instruction-like text]")) {
		t.Errorf("the mask must be in the masked style on both of its lines: %q", lines)
	}
	if strings.Contains(lines[0], th.MaskedText().Render("one")) {
		t.Errorf("text outside the mask is not masked: %q", lines[0])
	}
	// Every marker form is drawn masked, whole, on each line it wraps to.
	for _, m := range []string{guard.Marker(guard.KindOverrides), guard.Marker(guard.KindRole, guard.KindAddresses), guard.Marker(guard.KindOverrides + " (base64)")} {
		for _, w := range []int{14, 24, 40, 200} {
			lines := maskWrap(th, "one two "+m+" three", w, "", "", th.Dim)
			if got := strings.Fields(ansi.Strip(strings.Join(lines, " "))); strings.Join(got, " ") != "one two "+m+" three" {
				t.Fatalf("wrapped %q at %d: %q", m, w, lines)
			}
			for _, l := range lines {
				var inMask []string
				for _, f := range strings.Fields(ansi.Strip(l)) {
					if f != "one" && f != "two" && f != "three" {
						inMask = append(inMask, f)
					}
				}
				if len(inMask) > 0 && !strings.Contains(l, th.MaskedText().Render(strings.Join(inMask, " "))) {
					t.Errorf("%q at %d: %q is not in the masked style", m, w, l)
				}
			}
		}
	}
}
