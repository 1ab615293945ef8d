package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/mcpconfig"
)

// bulkhead mcp add writes the server into the config (enabled), starts
// it once through npx in its sandbox, lists its tools with their
// effects and caches them; mcp list shows it; mcp rm takes it out.
// npx here installs a package packed offline; the registry endpoint npm
// names is not asked (no terminal) and so not allowed: nothing needs it.
func TestMCPAddListRemove(t *testing.T) {
	for _, p := range []string{"npm", "npx", "node"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("BULKHEAD_INTEGRATION") == "1" {
				t.Fatalf("%s is needed: %v", p, err)
			}
			t.Skipf("no %s here", p)
		}
	}
	dir := t.TempDir()
	pack := exec.Command("npm", "pack", "--pack-destination", dir, "--loglevel=error")
	pack.Dir = filepath.Join("apps", "mcp", "testdata", "runner-app")
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v %s", err, out)
	}
	tgz := filepath.Join(dir, "bulkhead-runner-app-1.0.0.tgz")
	cfg, data := filepath.Join(t.TempDir(), "config.yaml"), t.TempDir()
	if err := os.WriteFile(cfg, []byte("# mine\nenable: [calc]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "mcp", "add", "--config", cfg, "--data-dir", data, "--read", dir, "runner", "--",
		"npx", "-y", "--offline", "--package="+tgz, "bulkhead-runner-app")
	if code != 0 || !strings.Contains(out, "runner lists 2 tools") || !strings.Contains(out, "whoami") || !strings.Contains(out, "added mcp.runner") {
		t.Fatalf("mcp add: exit %d\n%s\n%s", code, out, errOut)
	}
	b, _ := os.ReadFile(cfg)
	if !strings.Contains(string(b), "# mine") || !strings.Contains(string(b), "enable: [calc, runner]") {
		t.Errorf("the config:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(data, "mcp-cache", "runner.json")); err != nil {
		t.Errorf("its tool list is not cached: %v", err)
	}
	out, _, code = run(t, "mcp", "list", "--config", cfg, "--data-dir", data)
	if code != 0 || !strings.Contains(out, "runner") || !strings.Contains(out, "yes") {
		t.Errorf("mcp list: %d\n%s", code, out)
	}
	out, _, code = run(t, "mcp", "rm", "--config", cfg, "runner")
	b, _ = os.ReadFile(cfg)
	if code != 0 || strings.Contains(string(b), "runner") {
		t.Errorf("mcp rm: %d %s\n%s", code, out, b)
	}
	// Off a terminal, what the server left (its cached list) stays, and
	// rm says so; --purge removes it; then nothing of it is left.
	if out, _, code := run(t, "mcp", "rm", "--config", cfg, "--data-dir", data, "runner", "--purge"); code != 0 {
		t.Errorf("mcp rm --purge: %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "mcp-cache", "runner.json")); !os.IsNotExist(err) {
		t.Errorf("--purge left its tool list: %v", err)
	}
	if _, errOut, code := run(t, "mcp", "rm", "--config", cfg, "--data-dir", data, "runner"); code != 2 || !strings.Contains(errOut, "no MCP server") {
		t.Errorf("removing what is not there: %d %s", code, errOut)
	}
}

// mcp add of a name the config has already shows what would change and
// asks; off a terminal it asks nothing, changes nothing and exits 3,
// naming --force; --force changes only what mcp add writes (the tools
// overrides and the comments stay); the same command again has nothing
// to write.
func TestMCPAddAgainShowsWhatChanges(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	cfg, data := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "data")
	orig := "# mine\nenable: [builtin, tester]\nmcp:\n  tester:\n    command: " + server + "\n    tools:\n      echo: {effect: write}   # keep asking\n"
	os.WriteFile(cfg, []byte(orig), 0o600)
	add := func(args ...string) (string, string, int) {
		t.Helper()
		return runIn(t, strings.NewReader("y\n"), append([]string{"mcp", "add", "--config", cfg, "--data-dir", data}, args...)...)
	}
	out, errOut, code := add("tester", "--env", "MODE=new", "--", server)
	if b, _ := os.ReadFile(cfg); code != 3 || string(b) != orig {
		t.Fatalf("off a terminal: exit %d, the file\n%s\n%s%s", code, b, out, errOut)
	}
	for _, want := range []string{"mcp.tester is in " + cfg + " already; adding it again changes:", "env: (none) → {MODE: new}", "keeps tools and the file's comments as they are"} {
		if !strings.Contains(out, want) {
			t.Errorf("the change shown lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "standard input is not one; the same `bulkhead mcp add` with --force changes it") {
		t.Errorf("the message: %s", errOut)
	}
	out, errOut, code = add("tester", "--force", "--env", "MODE=new", "--", server)
	b, _ := os.ReadFile(cfg)
	if code != 0 || !strings.Contains(out, "changed mcp.tester in "+cfg+" (env)") || !strings.Contains(out, "tester lists") {
		t.Fatalf("--force: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"# mine", "echo: {effect: write} # keep asking", "MODE: new"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the file lacks %q:\n%s", want, b)
		}
	}
	if out, errOut, code = add("tester", "--env", "MODE=new", "--", server); code != 0 || !strings.Contains(out, "mcp.tester in "+cfg+" says this already: nothing to write") {
		t.Fatalf("the same again: exit %d\n%s%s", code, out, errOut)
	}
}

// The question goes to standard error (or the terminal), never to the
// output a script reads; y allows, anything else refuses; a change of a
// configured server is put the same way, and a no leaves it (exit 1).
func TestMCPQuestionsAreAskedWhereAPersonSeesThem(t *testing.T) {
	t.Parallel()
	asked := func(answer string) (*prompt, *strings.Builder) {
		var b strings.Builder
		return &prompt{tty: true, in: bufio.NewReader(strings.NewReader(answer)), out: &b, closeOut: func() {}}, &b
	}
	var log strings.Builder
	p, q := asked("y\n")
	n := &terminalNet{ask: p, log: &log}
	if _, ok := n.AllowNetwork(context.Background(), "fs", "registry.npmjs.org:443"); !ok || !strings.Contains(q.String(), "Allow it, for this listing? [y/N]") {
		t.Fatalf("allowed %v, asked %q", ok, q.String())
	}
	p, _ = asked("\n")
	n = &terminalNet{ask: p, log: &log}
	if _, ok := n.AllowNetwork(context.Background(), "fs", "registry.npmjs.org:443"); ok || n.network("fs").Unasked || len(n.network("fs").Refused) != 1 {
		t.Fatalf("an empty answer allowed it: %v %+v", ok, n.network("fs"))
	}
	// Not on a terminal: nothing is asked, the flag is named.
	n = &terminalNet{ask: &prompt{in: bufio.NewReader(strings.NewReader("y\n")), out: q}, log: &log}
	if _, ok := n.AllowNetwork(context.Background(), "fs", "registry.npmjs.org:443"); ok || !n.network("fs").Unasked || !strings.Contains(log.String(), "not asked, since standard input is not a terminal, so not allowed; --allow-net allows it") {
		t.Fatalf("off a terminal: %v %+v %q", ok, n.network("fs"), log.String())
	}
	plan := mcpconfig.Plan{Exists: true, Changes: []mcpconfig.Change{{Key: "args", Old: "[-y, pkg]", New: "[-y, pkg@2]"}}, Kept: []string{"tools"}}
	var out strings.Builder
	p, q = asked("n\n")
	var ee *exitError
	if err := confirmChange(p, &out, "/c.yaml", "fs", plan); !errors.As(err, &ee) || ee.code != exitFailed || out.Len() != 0 ||
		!strings.Contains(q.String(), "args: [-y, pkg] → [-y, pkg@2]") || !strings.Contains(q.String(), "Change mcp.fs? [y/N]") {
		t.Fatalf("declined: %v, output %q, asked %q", err, out.String(), q.String())
	}
	p, _ = asked("yes\n")
	if err := confirmChange(p, &out, "/c.yaml", "fs", plan); err != nil {
		t.Fatalf("yes: %v", err)
	}
}

// A listing's progress never lands in a question: while one waits for
// its answer nothing is said, and afterwards the time counts from the
// answer.
func TestProgressWaitsForTheQuestion(t *testing.T) {
	t.Parallel()
	p := &prompt{}
	start := time.Now().Add(-time.Minute)
	p.mu.Lock() // a question waits
	said := false
	p.between(start, func(time.Time) { said = true })
	if said {
		t.Fatal("progress written over a waiting question")
	}
	p.answered = time.Now()
	p.mu.Unlock()
	var since time.Time
	p.between(start, func(s time.Time) { since = s })
	if !since.Equal(p.answered) {
		t.Fatalf("progress counts from %v, not the answer %v", since, p.answered)
	}
}
