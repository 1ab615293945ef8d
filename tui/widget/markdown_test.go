package widget

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestCodeCopiesClean: inline code carries no no-break space into what a
// person copies, and a code line wider than the pane continues at the
// code's indentation behind a mark, never at the margin, with every cell
// of it kept and every line within the pane.
func TestCodeCopiesClean(t *testing.T) {
	t.Parallel()
	const long = `    fmt.Println("a very long line of code that goes on and on past the width of the pane for sure")`
	src := "Run `go test ./...` first.\n\n```go\nfunc main() {\n" + long + "\n}\n```\n"
	for _, w := range []int{40, 60, 100} {
		for _, dark := range []bool{true, false} {
			out := ansi.Strip((&Markdown{}).Render(src, w, dark))
			if strings.ContainsRune(out, '\u00a0') {
				t.Errorf("w=%d: a no-break space in %q", w, out)
			}
			if !strings.Contains(out, "Run go test ./... first.") {
				t.Errorf("w=%d: inline code not as typed:\n%s", w, out)
			}
			var code []string
			for l := range strings.SplitSeq(out, "\n") {
				if ansi.StringWidth(l) > w {
					t.Errorf("w=%d: line wider than the pane: %q", w, l)
				}
				if strings.HasPrefix(l, "    ") {
					code = append(code, l[codeIndent:])
				} else if strings.Contains(l, "on and") || strings.Contains(l, "sure") {
					t.Errorf("w=%d: code continued at the margin: %q", w, l)
				}
			}
			// The pieces put back together are the line.
			var joined strings.Builder
			for i, l := range code {
				if _, after, ok := strings.Cut(l, contMark); ok {
					l = after
				} else if i > 0 {
					joined.WriteString("\n")
				}
				joined.WriteString(l)
			}
			if !strings.Contains(joined.String(), strings.TrimLeft(long, " ")) {
				t.Errorf("w=%d: the long line lost cells:\n%s", w, joined.String())
			}
		}
	}
}
