package apps

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// An enabled MCP server that failed to start is shown as enabled but
// failed, with why — not as "off" or "disabled", which the hub's switch
// (it has no such app installed) would say — and the title does not
// count it among the apps installed.
func TestAFailedServerShowsEnabledButFailed(t *testing.T) {
	t.Parallel()
	a := &unlistedApp{name: "bad", why: "the MCP server exited as it started (exit status 1)", fix: "run `bulkhead mcp add bad`"}
	s, cmd := New(Config{Registry: registry{a}, Apps: &switches{}})
	run(s, cmd)
	v := ansi.Strip(s.View(style.New(true), 140, 30, nil))
	var row string
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, " bad ") {
			row = l
			break
		}
	}
	if !strings.Contains(row, "failed") || !strings.HasSuffix(strings.TrimRight(row, " │"), "on") || strings.Contains(row, "off") {
		t.Errorf("bad's row: %q, want state failed and on\n%s", row, v)
	}
	for _, want := range []string{"0 apps installed · 1 enabled but failed to start", "failed · enabled, but not running", "exit status 1", "mcp add bad"} {
		if !strings.Contains(v, want) {
			t.Errorf("the screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "disabled") {
		t.Errorf("the screen says bad is disabled:\n%s", v)
	}
}
