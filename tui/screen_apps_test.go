package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// The apps screen lists the installed apps with their source, effects
// (coloured by the worst), model and state; space calls the AppSwitch.
func TestAppsScreen(t *testing.T) {
	t.Parallel()
	sw := &appSwitch{off: map[string]bool{"creative_muse": true}}
	d := appsRig(t, 120, 40, sw)
	d.key(ctrl('a'))
	d.idle()
	// A spoke of mail works (as the hub's Working says, polled).
	d.send(healthMsg{checked: true, version: "0.0.0-scripted", working: []string{"mail"}})
	v := d.view()
	rows := map[string][]string{
		"metro_hail":       {"demo", "1 read", "estimate_fare", "spoke-model", "idle", "on"},
		"mail":             {"demo", "2 irreversible, 2 read", "search, read, send, delete", "running", "on"},
		"travel_mate":      {"demo", "1 write"},
		"health_companion": {"demo", "1 write, 1 read"},
		"creative_muse":    {"demo", "1 read", "off"},
		"symptom_solver":   {"demo", "llama3.2:3b"},
		"calc":             {"built-in", "1 read", "evaluate"},
		"docs_fs":          {"MCP stdio", "1 irreversible, 2 read"},
	}
	for app, cells := range rows {
		l := lineWith(v, " "+app+" ")
		for _, c := range cells {
			if !strings.Contains(l, c) {
				t.Errorf("%s row lacks %q: %q", app, c, l)
			}
		}
	}
	if !strings.Contains(v, "12 apps installed") {
		t.Errorf("count:\n%s", v)
	}
	raw := d.m.View().Content
	th := d.model().th
	for app, st := range map[string]string{"mail": sgr(th.Err.Render) + "2 irreversible", "travel_mate": sgr(th.Warn.Render) + "1 write", "drive": sgr(th.OK.Render) + "2 read"} {
		if l := lineWith(raw, " "+app+" "); !strings.Contains(l, st) {
			t.Errorf("%s: effects not coloured %q: %q", app, st, l)
		}
	}

	for range 3 {
		d.key(keyDown) // calc, clock, creative_muse, docs_fs
	}
	v = d.view()
	for _, want := range []string{"── docs_fs", "docs_fs · MCP stdio app · model spoke-model · idle · enabled",
		"runs:   npx -y @modelcontextprotocol/server-filesystem /home/ada/docs", "network: *",
		"irreversible write_file — tool write_file · annotated write", "read         search_files — tool search_files · open world",
		"read         read_file — tool read_file · provides files.read",
		// each layer of its sandbox, and whether it held
		"sandbox (its process, as the probe found it):", "✓ files — writes only its folders (Landlock ABI 7)",
		"✗ degraded network — a grant opens its port on every host (Landlock ABI 7, seccomp)"} {
		if !strings.Contains(v, want) {
			t.Errorf("MCP detail lacks %q:\n%s", want, v)
		}
	}
	if !strings.Contains(v, "sandbox: degraded — network open") {
		t.Errorf("the title must name the degraded layer:\n%s", v)
	}

	d.key(keyUp) // creative_muse: off
	d.key(keySpace)
	d.idle()
	if strings.Join(sw.calls, ",") != "creative_muse=on" || !strings.Contains(d.view(), "creative_muse enabled") {
		t.Fatalf("space on a disabled app: calls %v\n%s", sw.calls, d.view())
	}
	if l := lineWith(d.view(), " creative_muse "); !strings.HasSuffix(strings.TrimRight(l, " "), "on") {
		t.Errorf("creative_muse must show on: %q", l)
	}
	sw.fail = errors.New("the hub is busy")
	d.key(keySpace)
	d.idle()
	if v := d.view(); strings.Join(sw.calls, ",") != "creative_muse=on,creative_muse=off" || !strings.Contains(v, "could not disable creative_muse: the hub is busy") {
		t.Fatalf("a failed toggle: calls %v\n%s", sw.calls, v)
	}
	d.key(keyEnter)
	if v := d.view(); strings.Contains(v, "EFFECTS") || !strings.Contains(v, "functions:") {
		t.Errorf("enter gives the detail the screen:\n%s", v)
	}
	d.key(keyEsc)
	d.key(keyEsc)
	if d.model().overlay != overlayNone {
		t.Fatal("esc must close the apps screen")
	}
}

// Without an AppSwitch the screen says enable / disable is not available.
func TestAppsScreenWithoutASwitch(t *testing.T) {
	t.Parallel()
	d := appsRig(t, 80, 24, nil)
	d.typeText("/apps")
	d.key(keyEnter)
	d.idle()
	if v := d.view(); !strings.Contains(v, "enable / disable: not available") {
		t.Fatalf("no switch:\n%s", v)
	}
	d.key(keySpace)
	if v := d.view(); !strings.Contains(v, "enable / disable is not available in this build") {
		t.Fatalf("space without a switch:\n%s", v)
	}
}

// refreshingMCP is an MCP app whose tool list r refreshes.
type refreshingMCP struct {
	fakeMCP
	mu    sync.Mutex
	calls int
	next  mcp.Refreshed
}

func (f *refreshingMCP) Refresh(context.Context) mcp.Refreshed {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.next
}

func (f *refreshingMCP) set(r mcp.Refreshed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = r
}

// r on an MCP app lists its tools again (off the UI loop) and says what
// changed; on another app it says there is no server to list.
func TestAppsScreenRefreshesMCPTools(t *testing.T) {
	t.Parallel()
	f := &refreshingMCP{fakeMCP: newFakeMCP()}
	r := newRig(t, replies(ollamatest.Text("x")))
	reg, err := apps.NewRegistry(apps.Default(), calc.New(), f)
	if err != nil {
		t.Fatal(err)
	}
	opts := r.options()
	opts.Registry = reg
	d := newDriver(t, opts, 120, 40)
	d.key(ctrl('a'))
	d.idle()
	d.key(char('r')) // calc
	d.idle()
	if v := d.view(); !strings.Contains(v, "this app has no server") || f.calls != 0 || strings.Contains(v, "r refresh tools") {
		t.Fatalf("r on a built-in app: %d calls\n%s", f.calls, v)
	}
	d.key(keyDown) // docs_fs
	if v := d.view(); !strings.Contains(v, "r refresh tools") {
		t.Fatalf("the keys of an MCP app:\n%s", v)
	}
	for _, c := range []struct {
		r    mcp.Refreshed
		want string
	}{
		{mcp.Refreshed{App: "docs_fs", Server: "fs", Version: "1.0", Tools: 3, Cached: true}, "docs_fs: fs 1.0, 3 tools; unchanged"},
		{mcp.Refreshed{App: "docs_fs", Server: "fs", Version: "1.1", Tools: 3, Cached: true, Changed: true}, "docs_fs: fs 1.1, 3 tools, the same functions; tool list refreshed"},
		{mcp.Refreshed{App: "docs_fs", Server: "fs", Version: "2.0", Tools: 4, Cached: true, Changed: true, Stale: true}, "docs_fs: fs 2.0 lists other tools now (4); saved, and used from the next request"},
		{mcp.Refreshed{App: "docs_fs", Server: "fs", Version: "2.0", Tools: 4}, "docs_fs: fs 2.0 listed, 4 tools; installed, and used from the next request"},
		{mcp.Refreshed{App: "docs_fs", Err: errors.New("mcp docs_fs: could not start the MCP server")}, "could not refresh docs_fs: mcp docs_fs: could not start the MCP server"},
	} {
		f.set(c.r)
		d.key(char('r'))
		if v := d.view(); !strings.Contains(v, "listing docs_fs's tools (the server starts)…") {
			t.Fatalf("while listing:\n%s", v)
		}
		d.idle()
		if v := d.view(); !strings.Contains(v, c.want) {
			t.Fatalf("want %q:\n%s", c.want, v)
		}
	}
	if f.calls != 5 {
		t.Fatalf("%d refreshes", f.calls)
	}
}
