package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// What a server writes in its data folder is there for it when its
// configuration changes (a version pinned, an argument or a variable
// added) and bulkhead starts it again; the folder is written directly
// (its own, not staged), and another app's server can neither read nor
// write it. With the sandbox off the other app reads it, so the test can
// fail.
func TestAServersDataOutlivesItsConfiguration(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here, so the sandbox cannot confine a server's files: %v", err)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	server := func(app string, env map[string]string) mcp.Server {
		return mcp.Server{Command: mcp.TestServer, Env: env, Data: mcp.DataFolder(dataDir, app), Private: []string{dataDir}, Reserved: []string{mcp.DataRoot(dataDir)}}
	}
	graph := filepath.Join(mcp.DataFolder(dataDir, "memory"), "graph.json")
	a, err := mcp.New("memory", server("memory", nil), apps.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := probe(t, a, "", graph)
	a.Close()
	if b, err := os.ReadFile(graph); err != nil || !strings.Contains(out, "wrote") {
		t.Fatalf("the server could not write its data folder: %s %q %v", out, b, err)
	}
	os.WriteFile(graph, []byte("THE-GRAPH"), 0o600)
	a, err = mcp.New("memory", server("memory", map[string]string{"VERSION": "2"}), apps.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out = probe(t, a, graph, "")
	a.Close()
	if !strings.Contains(out, "THE-GRAPH") {
		t.Fatalf("another configuration of the app does not read its data: %s", out)
	}
	for _, unconfined := range []bool{false, true} {
		s := server("other", nil)
		s.Unconfined = unconfined
		b, err := mcp.New("other", s, apps.Default(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out := probe(t, b, graph, filepath.Join(filepath.Dir(graph), "planted"))
		b.Close()
		_, planted := os.Stat(filepath.Join(filepath.Dir(graph), "planted"))
		if reached := strings.Contains(out, "THE-GRAPH") || planted == nil; reached != unconfined {
			t.Fatalf("unconfined=%v: another app reached memory's data: %v (%s)", unconfined, reached, out)
		}
		os.Remove(filepath.Join(filepath.Dir(graph), "planted"))
	}
	// A grant that reaches the apps' data folders does not start.
	s := server("other", nil)
	s.Read = []string{mcp.DataRoot(dataDir)}
	if _, err := mcp.New("other", s, apps.Default(), nil); err == nil {
		t.Fatal("read: the apps' data folders were granted")
	}
}
