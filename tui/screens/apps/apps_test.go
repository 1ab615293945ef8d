package apps

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	appkit "github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
)

// unlistedApp is an enabled MCP server the serving process runs
// without, as its client shows it (serve's remoteMCP): not listed, with
// why and the fix; r lists it, and here fails as a server that needs
// the network does where none can be asked.
type unlistedApp struct {
	name, why, fix string
	refreshed      int
}

func (a *unlistedApp) Manifest() appkit.Manifest { return appkit.Manifest{Name: a.name} }
func (a *unlistedApp) Call(context.Context, appkit.Call) (json.RawMessage, error) {
	return nil, errors.New("not installed")
}
func (a *unlistedApp) Tools() []mcp.ToolInfo      { return nil }
func (a *unlistedApp) Remote() bool               { return false }
func (a *unlistedApp) Unlisted() (string, string) { return a.why, a.fix }
func (a *unlistedApp) Refresh(context.Context) mcp.Refreshed {
	a.refreshed++
	return mcp.Refreshed{App: a.name, Err: errors.New("mcp fs: not listed: could not start the MCP server: context deadline exceeded")}
}

type registry struct{ a *unlistedApp }

func (r registry) Names() []string { return []string{r.a.name} }
func (r registry) App(name string) (appkit.App, bool) {
	if name != r.a.name {
		return nil, false
	}
	return r.a, true
}

// switches is the hub's AppSwitch: an app it has not installed cannot
// be switched (hub.SetEnabled's error).
type switches struct{ calls []string }

func (s *switches) Enabled(string) bool { return false }
func (s *switches) SetEnabled(app string, on bool) error {
	s.calls = append(s.calls, app)
	return errors.New("no app \"" + app + "\" is installed")
}

// keyPress is a key as the root model hands it on.
func keyPress(k string) tea.KeyPressMsg {
	if k == "space" {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	return tea.KeyPressMsg{Code: rune(k[0]), Text: k}
}

// run runs a Cmd to its message and hands it to the screen.
func run(s *Screen, cmd tea.Cmd) {
	if cmd != nil {
		s.Update(cmd())
	}
}

// On an MCP server that could not be listed, space and r say what
// works: space switches nothing (there is no app yet) and names the
// fix, never "no app fs is installed"; r lists it, and when that fails
// (no network can be asked for here) the message names the fix. The fix
// is the serving process's own (`bulkhead mcp add fs`, which the root
// package's tests run as written).
func TestUnlistedAppsSayWhatWorks(t *testing.T) {
	t.Parallel()
	const fix = "run `bulkhead mcp add fs` (or `bulkhead doctor`) to start and list it once"
	a := &unlistedApp{name: "fs", why: "mcp fs: not listed: could not start the MCP server", fix: fix}
	sw := &switches{}
	s, cmd := New(Config{Registry: registry{a}, Apps: sw})
	run(s, cmd)

	run(s, mustCmd(s.Update(keyPress("space"))))
	if len(sw.calls) != 0 {
		t.Fatalf("space switched an app that is not installed: %v", sw.calls)
	}
	if !s.msgErr || !strings.Contains(s.msg, "fs is not listed, so there is nothing to enable yet") || !strings.Contains(s.msg, fix) || strings.Contains(s.msg, "no app") {
		t.Fatalf("space: %q", s.msg)
	}

	cmd, _ = s.Update(keyPress("r"))
	if !strings.Contains(s.msg, "listing fs's tools") || cmd == nil {
		t.Fatalf("r: %q", s.msg)
	}
	run(s, cmd)
	if a.refreshed != 1 || !s.msgErr || !strings.Contains(s.msg, "could not list fs") || !strings.Contains(s.msg, fix) || strings.Contains(s.msg, "not an MCP app") {
		t.Fatalf("r's failure: %q", s.msg)
	}

	// Without the serving process's fix, the one every such server takes.
	a.fix = ""
	run(s, load(s.c))
	run(s, mustCmd(s.Update(keyPress("space"))))
	if !strings.Contains(s.msg, "run `bulkhead mcp add fs` on a terminal") {
		t.Fatalf("space with no fix: %q", s.msg)
	}
}

func mustCmd(cmd tea.Cmd, _ any) tea.Cmd { return cmd }
