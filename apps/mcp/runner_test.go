package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// runnerPackage packs testdata/runner-app (an MCP server that says which
// code runs and tries to rewrite code others run) into a tarball that
// npx installs offline; it skips without npm, unless
// BULKHEAD_INTEGRATION=1.
func runnerPackage(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"npm", "npx", "node"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("BULKHEAD_INTEGRATION") == "1" {
				t.Fatalf("%s is needed to start a server through npx: %v", p, err)
			}
			t.Skipf("no %s here: %v", p, err)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("npm", "pack", "--pack-destination", dir, "--loglevel=error")
	cmd.Dir = filepath.Join("testdata", "runner-app")
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, "npm-cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v %s", err, out)
	}
	return filepath.Join(dir, "bulkhead-runner-app-1.0.0.tgz")
}

// userNpx runs the package through the user's own npx, outside any
// sandbox, as the user would: it prints which code ran.
func userNpx(t *testing.T, tgz string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npx", "-y", "--offline", "--package="+tgz, "bulkhead-runner-app", "--whoami")
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the user's npx: %v %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func callTool(t *testing.T, a *mcp.App, fn string, args any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, _ := json.Marshal(args)
	out, err := a.Call(ctx, apps.Call{Function: fn, Args: b})
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	var res struct{ Content string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s: %s: %v", fn, out, err)
	}
	return res.Content
}

// End to end, a real npx: two apps started through npx with the same
// package, and the user's own npx of it. The app that attacks rewrites
// the code in its own cache only (under bulkhead's apps folder); the
// user's npx cache and the other app's stay as they were, and both run
// unchanged code afterwards. Unconfined (the test-only switch: the
// user's environment and npm cache), the same attack rewrites what the
// user's npx runs next — so the test can fail.
func TestNpxAppsCacheTheirOwn(t *testing.T) {
	tgz := runnerPackage(t)
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("npm_config_cache", "")
	if got := userNpx(t, tgz); got != "mark: original" {
		t.Fatalf("the user's npx said %q", got)
	}
	userCli, _ := filepath.Glob(filepath.Join(home, ".npm", "_npx", "*", "node_modules", "bulkhead-runner-app", "cli.js"))
	if len(userCli) != 1 {
		t.Fatalf("the user's npx installed %v", userCli)
	}
	userCode, _ := os.ReadFile(userCli[0])
	cache := t.TempDir() // bulkhead's folder of the apps' runner caches
	start := func(name string, unconfined bool) *mcp.App {
		t.Helper()
		cfg := mcp.Server{Command: "npx", Args: []string{"-y", "--offline", "--package=" + tgz, "bulkhead-runner-app"},
			Read: []string{filepath.Dir(tgz)}, Own: filepath.Join(cache, name), Unconfined: unconfined, StartTimeout: 60 * time.Second}
		a, err := mcp.New(name, cfg, apps.Default(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	b := start("b", false)
	mark, bCli, _ := strings.Cut(callTool(t, b, "whoami", map[string]any{}), " at ")
	if mark != "mark: original" || !strings.HasPrefix(bCli, filepath.Join(cache, "b")+"/") {
		t.Fatalf("app b's code must run from its own cache: %s at %s", mark, bCli)
	}
	bCode, _ := os.ReadFile(bCli)
	if len(bCode) == 0 {
		t.Fatalf("app b's code at %q", bCli)
	}

	a := start("a", false)
	out := callTool(t, a, "attack", map[string]any{"paths": []string{userCli[0], bCli}})
	if strings.Count(out, "rewritten") != 1 {
		t.Errorf("only the app's own code may be rewritten: %s", out)
	}
	if got, _ := os.ReadFile(userCli[0]); string(got) != string(userCode) {
		t.Errorf("the user's npx cache changed")
	}
	if got, _ := os.ReadFile(bCli); string(got) != string(bCode) {
		t.Errorf("app b's cache changed")
	}
	aOwn, _ := filepath.Glob(filepath.Join(cache, "a", "*", "npm", "_npx", "*", "node_modules", "bulkhead-runner-app", "cli.js"))
	if len(aOwn) != 1 {
		t.Fatalf("app a's cache is not its own: %v", aOwn)
	}
	if got, _ := os.ReadFile(aOwn[0]); !strings.Contains(string(got), `const MARK = "PWNED"`) {
		t.Errorf("the attack rewrote its own code, in its own cache (or it proves nothing): %s", out)
	}
	if got := userNpx(t, tgz); got != "mark: original" {
		t.Errorf("the user's npx now runs %q", got)
	}
	b.Close()
	b2 := start("b", false)
	if who := callTool(t, b2, "whoami", map[string]any{}); !strings.Contains(who, "mark: original") {
		t.Errorf("app b now runs %s", who)
	}

	// Unconfined, the same attack reaches the user's cache: the test bites.
	u := start("u", true)
	callTool(t, u, "attack", map[string]any{"paths": []string{userCli[0]}})
	if got := userNpx(t, tgz); got != "mark: PWNED" {
		t.Errorf("unconfined, the attack must reach the user's npx (or the test proves nothing): %q", got)
	}
}
