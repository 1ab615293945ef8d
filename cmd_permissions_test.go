package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// grantPermanently makes a permanent grant through a dialog answer, as the
// TUI would, and returns its id.
func grantPermanently(t *testing.T, dir string, tamper bool) string {
	t.Helper()
	cfg := config.Config{DataDir: dir, Ollama: config.Ollama{Host: "127.0.0.1:1"}, Hub: config.Owner{Model: "m"}, Spokes: config.Owner{Model: "m"}, Enable: []string{"builtin"}, Workspace: t.TempDir()}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{Prompter: permissionstest.NewPrompter(permissions.AnswerPermanent)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	d, err := eng.Broker.Request(context.Background(), permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "notes", Function: "notes.add", Detail: "Run notes"})
	if err != nil || !d.Allowed || d.GrantID == "" {
		t.Fatalf("decision %+v %v", d, err)
	}
	if tamper {
		ns, _ := eng.Store.Namespace("hub")
		raw, err := ns.Get("grants/" + d.GrantID)
		if err != nil {
			t.Fatal(err)
		}
		ns.Set("grants/"+d.GrantID, []byte(strings.Replace(string(raw), `"object":"notes"`, `"object":"shell"`, 1)))
	}
	return d.GrantID
}

func TestPermissionsCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	id := grantPermanently(t, dir, false)

	out, _, code := run(t, "permissions", "list", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "hub → notes") || !strings.Contains(out, "permanent") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "permissions", "log", "--json", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, `"kind":"exec"`) || !strings.Contains(out, `"source":"user"`) {
		t.Fatalf("log: exit %d\n%s", code, out)
	}
	if _, errOut, code := run(t, "permissions", "revoke", "--data-dir", dir); code != 2 {
		t.Fatalf("revoke without a target: exit %d %s", code, errOut)
	}
	if out, errOut, code := run(t, "permissions", "revoke", id, "--data-dir", dir); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: exit %d %s %s", code, out, errOut)
	}
	out, _, _ = run(t, "permissions", "list", "--data-dir", dir)
	if strings.Contains(out, id) {
		t.Fatalf("the grant survived revoke:\n%s", out)
	}
}

func TestPermissionsCLIShowsTamperedGrant(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	id := grantPermanently(t, dir, true)
	out, _, code := run(t, "permissions", "list", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "INVALID SIGNATURE") {
		t.Fatalf("a tampered grant must be listed as invalid: exit %d\n%s", code, out)
	}
}
