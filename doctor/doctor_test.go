package doctor

import (
	"strings"
	"testing"
)

// A detail can be the server's words: Print shows control characters in
// it as visible escapes, each check on its own line.
func TestPrintShowsServerTextAsVisibleEscapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	ok := Print(&b, []Check{
		{Name: "ollama http://h", OK: true, Detail: "version 1.0\x1b]0;pwned\a\n✓ everything: fine"},
		{Name: "model m", Detail: "\x1b[2J\u202e", Fix: "ollama pull m\r"},
	})
	want := "✓ ollama http://h: version 1.0\\x1b]0;pwned\\a\\n✓ everything: fine\n" +
		"✗ model m: \\x1b[2J\\u202e\n" +
		"    fix: ollama pull m\\r\n"
	if ok || b.String() != want {
		t.Fatalf("ok %v, got\n%s\nwant\n%s", ok, b.String(), want)
	}
}
