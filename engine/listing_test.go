package engine_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
)

// testServer is the MCP test server of apps/mcp, built for the test
// ($BULKHEAD_MCP_TESTSERVER names a built one).
func testServer(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BULKHEAD_MCP_TESTSERVER"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "testserver")
	if b, err := exec.Command("go", "build", "-o", out, "../apps/mcp/internal/testserver").CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, b)
	}
	return out
}

// A server that cannot start is left out, once its background listing
// ends, with its own words and never as a network problem (though its
// config names an endpoint): fs, given a folder to write that does not
// exist — the README's example pasted into a fresh home — is not
// started, and says which folder and the mkdir that makes it; gone,
// which exits as it starts, is reported with its exit status, its last
// lines of stderr and the likeliest cause (the folder it was given, which
// does not exist). Its stderr is in bulkhead.log, for the serving
// process's listing and for doctor's (RefreshMCP, in a process of its
// own) alike. A listing that failed is not started again for another
// profile of the same configuration.
func TestAServerThatCannotStartIsReportedWithItsOwnWords(t *testing.T) {
	server := testServer(t)
	notes := filepath.Join(t.TempDir(), "notes") // not made
	npm := []string{"registry.npmjs.org:443"}
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Enable: []string{"clock", "fs", "gone"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m"}, Spokes: config.Owner{Model: "m"}, Ollama: config.Ollama{Host: "http://127.0.0.1:1"},
		MCP: map[string]config.MCPServer{
			"fs": {Command: server, Net: npm, Folders: []string{notes}, Args: []string{notes}},
			"gone": {Command: server, Net: npm,
				Args: []string{"-stderr", `Error accessing directory ` + notes + `\nNone of the specified directories are accessible\n`, "-exit", "1", notes}},
		}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.WaitListed(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := eng.Profile(engine.ProfileSpec{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Release(p)
	if len(p.Unlisted) != 2 {
		t.Fatalf("unlisted: %+v", p.Unlisted)
	}
	fs, gone := p.Unlisted[0].Now(), p.Unlisted[1].Now()
	var fe *mcp.FolderError
	if fs.Pending || !errors.As(fs.Err, &fe) || !strings.Contains(fs.Why, "the folder "+notes+" that its config gives it (mcp.fs.folders) does not exist") ||
		!strings.Contains(fs.Fix, "mkdir -p "+notes) {
		t.Errorf("fs: %+v", fs)
	}
	var ee *mcp.ExitError
	if gone.Pending || !errors.As(gone.Err, &ee) || ee.Code != 1 {
		t.Fatalf("gone: %+v", gone)
	}
	for _, want := range []string{"exit status 1", `"None of the specified directories are accessible"`, "the folder " + notes + " that its config names does not exist"} {
		if !strings.Contains(gone.Why, want) {
			t.Errorf("gone's why lacks %q: %s", want, gone.Why)
		}
	}
	if !strings.Contains(gone.Fix, "mkdir -p "+notes) {
		t.Errorf("gone's fix: %q", gone.Fix)
	}
	for _, u := range []engine.Unlisted{fs, gone} {
		if strings.Contains(u.Why+u.Fix, "network") {
			t.Errorf("%s blames the network: %s — %s", u.App, u.Why, u.Fix)
		}
	}
	other, err := eng.Profile(engine.ProfileSpec{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Release(other)
	if len(other.Listing()) != 0 || len(eng.Listings()) != 0 {
		t.Errorf("the failed listings were started again: %v", eng.Listings())
	}

	log := filepath.Join(cfg.DataDir, "bulkhead.log")
	count := func() int {
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"msg":"server stderr"`) && strings.Contains(l, "None of the specified directories are accessible") {
				n++
			}
		}
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("the serving process's listing logged the line %d times, want 1", n)
	}
	// doctor's listing, which runs in its own process, logs there too.
	for _, r := range engine.RefreshMCP(context.Background(), cfg) {
		if r.App == "gone" && (!errors.As(r.Err, &ee) || !strings.Contains(r.Err.Error(), "its stderr is in bulkhead.log")) {
			t.Fatalf("doctor's listing of gone: %+v", r)
		}
	}
	if n := count(); n != 2 {
		t.Fatalf("after doctor's listing the log holds the line %d times, want 2", n)
	}
}
