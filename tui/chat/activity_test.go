package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// A request the turn asked about and never had answered says so: asking
// while the turn runs, not answered once it has ended.
func TestAnUnansweredRequestSaysSo(t *testing.T) {
	t.Parallel()
	req := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "mail", Function: "mail.search", Detail: "Run mail"}
	x := &Extras{}
	x.add(hub.Event{Kind: hub.EventPermission, Permission: &req})
	th := style.New(true)
	if l := ansi.Strip(strings.Join(x.lines(th, 80, true), "")); !strings.Contains(l, "⚑ exec mail → … asking") {
		t.Errorf("live: %q", l)
	}
	if l := ansi.Strip(strings.Join(x.lines(th, 80, false), "")); !strings.Contains(l, "⚑ exec mail → not answered") {
		t.Errorf("ended: %q", l)
	}
}

// A call's arguments read as the dialog shows them: & < > as written
// (JSON's HTML escapes undone), a control character still escaped.
func TestACallsArgumentsReadAsWritten(t *testing.T) {
	t.Parallel()
	args, _ := json.Marshal(map[string]string{"command": "make && echo hi >> README <x\x1b"})
	x := &Extras{}
	x.add(hub.Event{Kind: hub.EventAppCall, App: "shell", Function: "shell.run", Args: args})
	l := ansi.Strip(strings.Join(x.lines(style.New(true), 120, true), ""))
	if !strings.Contains(l, `make && echo hi >> README <x\u001b`) || strings.Contains(l, `\u0026`) || strings.Contains(l, "\x1b") {
		t.Errorf("the call's line: %q", l)
	}
}
