package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// A fresh data directory runs the built-in apps without an exec dialog:
// the default grants are listed in the permission manager (origin
// "default"), decide without asking, never cover what cannot be undone
// nor another app, and one the user revoked is not given again.
func TestDefaultGrants(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	open := func() *engine.Engine {
		cfg := config.Config{DataDir: dir, Ollama: config.Ollama{Host: "http://127.0.0.1:1"}, Enable: []string{"builtin"}, Workspace: t.TempDir(),
			Hub: config.Owner{Model: "m"}, Spokes: config.Owner{Model: "m"}}
		eng, err := engine.Open(context.Background(), cfg, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	eng := open()
	byFunction := map[string]permissions.Grant{}
	for _, g := range eng.Broker.Grants() {
		if g.Origin == permissions.OriginDefault {
			byFunction[g.Function] = g
		}
	}
	for _, fn := range []string{"calc.evaluate", "clock.now", "files.read", "files.list", "files.search", "notes.search"} {
		g, ok := byFunction[fn]
		if !ok || g.Kind != permissions.KindExec || g.Subject != "hub" || g.Object != fn[:strings.Index(fn, ".")] || !g.Permanent {
			t.Errorf("%s: default grant %+v", fn, g)
		}
	}
	for _, fn := range []string{"files.write", "files.delete", "notes.add", "shell.run"} {
		if g, ok := byFunction[fn]; ok {
			t.Errorf("%s changes something, and has a default grant: %+v", fn, g)
		}
	}
	ctx := context.Background()
	ask := func(r permissions.Request) bool {
		d, err := eng.Broker.Request(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	// No prompter: what needs asking is denied.
	if !ask(permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "files", Function: "files.read"}) {
		t.Error("running files to read asked")
	}
	if ask(permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "files", Function: "files.write"}) {
		t.Error("running files to write did not ask")
	}
	if ask(permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "mail"}) {
		t.Error("a demo app ran without asking")
	}
	if ask(permissions.Request{Kind: permissions.KindIrreversible, Subject: "shell", Object: "shell", Function: "run", Warning: "cannot be undone"}) {
		t.Error("a command ran without asking")
	}
	if ask(permissions.Request{Kind: permissions.KindCollab, Subject: "files", Object: "notes", Function: "notes.add", Warning: "another app"}) {
		t.Error("a cross-app request ran without asking")
	}
	if err := eng.Broker.Revoke(byFunction["files.read"].ID); err != nil {
		t.Fatal(err)
	}
	eng.Close()

	eng = open()
	defer eng.Close()
	n := 0
	for _, g := range eng.Broker.Grants() {
		if g.Origin == permissions.OriginDefault {
			n++
			if g.Function == "files.read" {
				t.Error("a revoked default grant came back")
			}
		}
	}
	if n != len(byFunction)-1 {
		t.Errorf("%d default grants after one was revoked, want %d", n, len(byFunction)-1)
	}
}
