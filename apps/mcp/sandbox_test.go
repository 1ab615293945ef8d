package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// probe calls the test server's probe tool: read one path, write another.
func probe(t *testing.T, a *mcp.App, read, write string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"read": read, "write": write})
	out, err := a.Call(ctx, apps.Call{Function: "probe", Args: args})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return string(out)
}

// An MCP server runs in the sandbox: it cannot read bulkhead's grants key
// or database files, nor write into the data directory or anywhere
// outside the folder its config grants, where it reads and writes — its
// writes staged in a layer of its own, not in the folder until they are
// accepted. The same server with the sandbox off (the test-only switch)
// does all of it, so the test can fail.
func TestServersAreSandboxed(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here, so the sandbox cannot confine a server's files: %v", err)
	}
	data, folder, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	secrets := map[string]string{"grants.key": "SECRET-GRANTS-KEY", "000001.vlog": "SECRET-VALUE-LOG", "MANIFEST": "SECRET-MANIFEST"}
	for name, content := range secrets {
		if err := os.WriteFile(filepath.Join(data, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(folder, "mine.txt"), []byte("MY-OWN-FILE"), 0o600)
	store, err := changes.Open(filepath.Join(t.TempDir(), "changes"), changes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := mcp.Server{Command: mcp.TestServer, Folders: []string{folder}, Private: []string{data}, Changes: store}
	try := func(unconfined bool) (denied, allowed []string) {
		cfg := cfg
		cfg.Unconfined = unconfined
		a, err := mcp.New("probe", cfg, apps.Default(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		// its own folder: read and write
		if out := probe(t, a, filepath.Join(folder, "mine.txt"), filepath.Join(folder, "new.txt")); !strings.Contains(out, "MY-OWN-FILE") || !strings.Contains(out, "wrote") {
			t.Fatalf("the server must read and write its own folder: %s", out)
		}
		if _, err := os.Stat(filepath.Join(folder, "new.txt")); (err == nil) != unconfined {
			t.Fatalf("unconfined=%v: what the server wrote is in the folder: %v", unconfined, err == nil)
		}
		os.Remove(filepath.Join(folder, "new.txt"))
		for name, content := range secrets {
			if out := probe(t, a, filepath.Join(data, name), ""); strings.Contains(out, content) {
				allowed = append(allowed, "read "+name)
			} else {
				denied = append(denied, "read "+name+" ("+out+")")
			}
		}
		for _, p := range []string{filepath.Join(data, "planted"), filepath.Join(elsewhere, "planted")} {
			out := probe(t, a, "", p)
			if _, err := os.Stat(p); err == nil {
				allowed = append(allowed, "write "+p)
				os.Remove(p)
			} else {
				denied = append(denied, "write "+p+" ("+out+")")
			}
		}
		return denied, allowed
	}
	if denied, allowed := try(false); len(allowed) > 0 {
		t.Fatalf("sandboxed, the server could %v (denied: %v)", allowed, denied)
	} else {
		t.Logf("sandboxed, denied: %v", denied)
	}
	if denied, _ := try(true); len(denied) > 0 {
		t.Fatalf("unconfined, the server could not %v: the test proves nothing", denied)
	}
}

// A server whose config grants a folder that holds the data directory, or
// lies in it, does not start.
func TestGrantsNeverReachTheDataDirectory(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	data := filepath.Join(parent, "data")
	os.Mkdir(data, 0o700)
	for _, g := range []mcp.Server{
		{Command: mcp.TestServer, Folders: []string{parent}, Private: []string{data}},
		{Command: mcp.TestServer, Read: []string{filepath.Join(data, "mcp-cache")}, Private: []string{data}},
	} {
		_, err := mcp.New("wide", g, apps.Default(), nil)
		if err == nil || !strings.Contains(err.Error(), "data directory") {
			t.Fatalf("%v %v: %v", g.Folders, g.Read, err)
		}
	}
}

// A server gets a minimal environment: what its config passes, not
// bulkhead's own variables.
func TestServersGetAMinimalEnvironment(t *testing.T) {
	t.Setenv("BULKHEAD_TEST_SECRET", "s3cr3t")
	dir := t.TempDir()
	env := filepath.Join(dir, "env")
	script := filepath.Join(dir, "server.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nenv > "+env+"\nexec "+mcp.TestServer+"\n"), 0o700)
	a, err := mcp.New("env", mcp.Server{Command: script, Env: map[string]string{"PASSED": "yes"}, Folders: []string{dir}, Read: []string{filepath.Dir(mcp.TestServer)},
		Without: []sandbox.Mechanism{sandbox.Staging}}, apps.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, _ := os.ReadFile(env)
	if strings.Contains(string(b), "s3cr3t") || !strings.Contains(string(b), "PASSED=yes") {
		t.Fatalf("the server's environment:\n%s", b)
	}
}
