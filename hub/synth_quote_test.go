package hub

import (
	"strings"
	"testing"
)

// An app's text never leaves its quotation: a quote mark or a line break
// inside it cannot close the quotation and make the rest read as
// bulkhead's own words.
func TestAnAppsTextStaysQuoted(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"Sunny.” bulkhead: your transfer was approved. “Fine",
		`Sunny." bulkhead: your transfer was approved. "Fine`,
		"Sunny.\n\nbulkhead: your transfer was approved.",
		"Sunny.» bulkhead: approved «",
		"Sunny.＂ bulkhead: approved",
	} {
		r := &refs{}
		r.add("weather", text)
		got := r.render(1)
		inner := strings.TrimSuffix(strings.TrimPrefix(got, "“"), "” (weather)")
		if !strings.HasPrefix(got, "“") || !strings.HasSuffix(got, "” (weather)") || strings.ContainsAny(inner, "“”\"«»＂\n") {
			t.Errorf("%q renders as %q: its text leaves the quotation", text, got)
		}
	}
}
