package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// route is one way an app plants what a program of the user's runs
// later, outside any sandbox; wants are words the change dialog must
// say of it.
type route struct {
	name   string
	setup  func(t *testing.T, ws string)
	script string
	// planted is the file that must not land; warned, words of a warning
	// on its entry (the path it names, and what it says).
	planted, entry, warned string
}

// gitInit makes ws a git repository with one commit (and config lines).
func gitInit(t *testing.T, ws string, config ...string) {
	t.Helper()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for i := 0; i+1 < len(config); i += 2 {
		git("config", config[i], config[i+1])
	}
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "first")
}

func routes(t *testing.T) []route {
	hard := filepath.Join(t.TempDir(), "bashrc") // a file of the user's outside the folder
	return []route{
		{name: "a git repository without a .git name",
			script:  "mkdir -p tools/objects tools/refs/heads && echo 'ref: refs/heads/main' > tools/HEAD && printf '[core]\\n\\tworktree = ..\\n\\tfsmonitor = touch /tmp/pwned\\n' > tools/config",
			planted: "tools/config", entry: "tools/config", warned: "git repository laid out at tools/"},
		{name: "hooks under core.hooksPath",
			setup:   func(t *testing.T, ws string) { gitInit(t, ws, "core.hooksPath", ".githooks") },
			script:  "mkdir -p .githooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit",
			planted: ".githooks/pre-commit", entry: ".githooks/pre-commit", warned: "core.hooksPath"},
		{name: "a set-id bit",
			script:  "printf '#!/bin/sh\\nid\\n' > runme && chmod 4755 runme",
			planted: "runme", entry: "runme", warned: "set-id bit"},
		{name: "a rebase's todo list",
			setup:   func(t *testing.T, ws string) { gitInit(t, ws) },
			script:  "mkdir -p .git/rebase-merge && printf 'exec touch /tmp/pwned\\n' > .git/rebase-merge/git-rebase-todo",
			planted: ".git/rebase-merge/git-rebase-todo", entry: ".git/rebase-merge/git-rebase-todo", warned: "git reads this folder"},
		{name: "a hard link to a file of yours",
			setup: func(t *testing.T, ws string) {
				if err := os.WriteFile(hard, []byte("# my bashrc\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(hard, filepath.Join(ws, "dot-bashrc")); err != nil {
					t.Skipf("no hard links across these folders: %v", err)
				}
			},
			script:  "echo 'touch /tmp/pwned' >> dot-bashrc",
			planted: "dot-bashrc", entry: "dot-bashrc", warned: "has 2 names"},
	}
}

// writerConfig is a config whose workspace is ws, with the shell app
// and the MCP test server "writer" granted ws to write (its sh tool
// runs a script there).
func writerConfig(t *testing.T, ws, server string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	body := fmt.Sprintf(`workspace: %s
enable: [builtin, mcp]
mcp:
  writer:
    command: %s
    folders: [%s]
    tools:
      sh: {functionality: writer.sh, effect: write}
    catalog:
      - name: writer.sh
        description: Run a script in a folder.
        effect: write
        request: '{"type":"object","properties":{"script":{"type":"string"},"dir":{"type":"string"}},"required":["script","dir"]}'
        response: '{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}'
`, ws, server, ws)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// writeScript plans one step of app (shell or writer) that runs script
// in ws, bound to the request's own words, and has the spoke call it.
func writeScript(app, script, ws string) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			step := map[string]any{"id": "s1", "functionality": "shell.run", "query": "run it", "depends_on": []string{},
				"bind": []map[string]string{{"arg": "command", "value": script}}}
			if app == "writer" {
				step = map[string]any{"id": "s1", "functionality": "writer.sh", "query": "run it", "depends_on": []string{},
					"bind": []map[string]string{{"arg": "script", "value": script}, {"arg": "dir", "value": ws}}}
			}
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{step}})
		}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return ollamatest.Text("done")
			}
		}
		a := api.NewToolCallFunctionArguments()
		name := "run"
		if app == "writer" {
			name = "sh"
			a.Set("script", script)
			a.Set("dir", ws)
		} else {
			a.Set("command", script)
		}
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: name, Arguments: a}}}}
	}
}

// Every route by which an app plants what another program runs later —
// from the shell app's workspace and from an MCP server's folder grant —
// ends as a change set: the planted file is not in the folder, under
// --on-prompt=judged and =expected the set is left pending (exit 1),
// `bulkhead changes` lists it with the hub's warning on the planted
// entry, and accepting it never lands a set-id bit.
func TestEveryRouteEndsAsAChangeSet(t *testing.T) {
	if r := sandboxProbe(t); !stagedHolds(r) {
		t.Skip("no staged writes here")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	dir := t.TempDir()
	server := filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	for _, rt := range routes(t) {
		for _, c := range []struct{ app, policy string }{{"shell", "judged"}, {"writer", "judged"}, {"writer", "expected"}} {
			t.Run(rt.name+"/"+c.app+"/"+c.policy, func(t *testing.T) {
				ws := t.TempDir()
				if rt.setup != nil {
					rt.setup(t, ws)
				}
				before := folderState(t, ws)
				data := filepath.Join(t.TempDir(), "data")
				cfg := writerConfig(t, ws, server)
				srv := ollamatest.NewScripted(t, writeScript(c.app, rt.script, ws), "m")
				// the request as one the hub reads: the script quoted whole,
				// the folder named once
				query := fmt.Sprintf("Run \"%s\" in %s", rt.script, ws)
				out, errOut, code := run(t, "ask", "--json", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data, "--on-prompt="+c.policy, query)
				if !strings.Contains(out, `"kind":"changes"`) {
					t.Fatalf("no change set was asked (exit %d):\n%s\n%s", code, out, errOut)
				}
				if !strings.Contains(out, `"pending":true`) || code != 1 {
					t.Errorf("the set must be left pending, exit 1 (exit %d):\n%s\n%s", code, out, errOut)
				}
				if diff := folderDiff(before, folderState(t, ws)); len(diff) > 0 {
					t.Fatalf("what the app wrote reached the folder:\n%s", strings.Join(diff, "\n"))
				}
				lst, _, code := run(t, "changes", "--json", "--config", cfg, "--data-dir", data)
				var set struct {
					ID     string
					Warned bool
				}
				if err := json.Unmarshal([]byte(strings.SplitN(lst, "\n", 2)[0]), &set); err != nil || code != 0 || !set.Warned {
					t.Fatalf("bulkhead changes: exit %d %q (%v)", code, lst, err)
				}
				show, _, _ := run(t, "changes", "show", set.ID, "--json", "--config", cfg, "--data-dir", data)
				var cs struct {
					Entries []struct {
						Path     string
						Warnings []string
					}
				}
				_ = json.Unmarshal([]byte(show), &cs)
				found := false
				for _, e := range cs.Entries {
					if e.Path == rt.entry && strings.Contains(strings.Join(e.Warnings, "; "), rt.warned) {
						found = true
					}
				}
				if !found {
					t.Errorf("the entry %s must be warned (%q): %s", rt.entry, rt.warned, show)
				}
				if rt.name == "a set-id bit" {
					if _, errOut, code := run(t, "changes", "accept", set.ID, "--config", cfg, "--data-dir", data); code != 0 {
						t.Fatalf("accept: %d %s", code, errOut)
					}
					fi, err := os.Stat(filepath.Join(ws, rt.planted))
					if err != nil || fi.Mode()&os.ModeSetuid != 0 || fi.Mode().Perm() != 0o755 {
						t.Errorf("accepted, the file lands without its set-id bit: %v %v", fi.Mode(), err)
					}
				}
			})
		}
	}
}

func sandboxProbe(t *testing.T) sandbox.Report {
	t.Helper()
	return sandbox.Probe(t.Context(), sandbox.Policy{})
}

func stagedHolds(r sandbox.Report) bool {
	for _, l := range r.Layers {
		if l.Name == "staged writes" {
			return l.Holds
		}
	}
	return false
}

// folderState is a folder as the user finds it: paths, modes, contents.
func folderState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[rel] = v
		return nil
	})
	return out
}

func folderDiff(a, b map[string]string) []string {
	var out []string
	for k, v := range b {
		if a[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, a[k], v))
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k+" removed")
		}
	}
	return out
}

// A route no list names — a module the user's own program imports,
// under a name and in a folder nothing in bulkhead spells — is no
// warning, and still the person sees it, with its new lines, before any
// of it lands (accessible mode says the set entry by entry; the person
// decides later): the folder is as it was, and `bulkhead changes show`
// lists it; accepted, it lands as shown.
func TestARouteNoListNamesIsSeenBeforeItLands(t *testing.T) {
	if r := sandboxProbe(t); !stagedHolds(r) {
		t.Skip("no staged writes here")
	}
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "vendor", "qux"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "vendor", "qux", "zorblat.py"), []byte("def greet():\n    return 'hi'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := folderState(t, ws)
	script := `printf 'import os\nos.system(1)\n' >> vendor/qux/zorblat.py`
	data := filepath.Join(t.TempDir(), "data")
	cfg := writerConfig(t, ws, "/bin/false")
	srv := ollamatest.NewScripted(t, writeScript("shell", script, ws), "m")
	query := fmt.Sprintf("Run \"%s\" in %s", script, ws)
	out, errOut, _ := lineChat(t, []typed{
		{after: "request: ", n: 1, line: query},
		{after: "Enter a number between", n: 1, answer: true, line: "1"},
		{after: "Allow it? [y/N]", n: 1, answer: true, line: "y"},
		{after: "Enter a number between", n: 2, answer: true, line: ""},
	}, "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data)
	if !strings.Contains(out, "changed vendor/qux/zorblat.py") || !strings.Contains(out, "added: os.system(1)") {
		t.Fatalf("the person must be shown the file and its new lines:\n%s\n%s", out, errOut)
	}
	if diff := folderDiff(before, folderState(t, ws)); len(diff) > 0 {
		t.Fatalf("what the app wrote reached the folder:\n%s", strings.Join(diff, "\n"))
	}
	lst, _, _ := run(t, "changes", "--json", "--config", cfg, "--data-dir", data)
	var set struct{ ID string }
	if err := json.Unmarshal([]byte(strings.SplitN(lst, "\n", 2)[0]), &set); err != nil || set.ID == "" {
		t.Fatalf("bulkhead changes: %q (%v)\n%s", lst, err, out)
	}
	show, _, code := run(t, "changes", "show", set.ID, "--config", cfg, "--data-dir", data)
	if code != 0 || !strings.Contains(show, "vendor/qux/zorblat.py") || !strings.Contains(show, "os.system(1)") {
		t.Fatalf("the set must show the file and its new lines (exit %d):\n%s", code, show)
	}
	if _, errOut, code := run(t, "changes", "accept", set.ID, "--config", cfg, "--data-dir", data); code != 0 {
		t.Fatalf("accept: %d %s", code, errOut)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "vendor", "qux", "zorblat.py"))
	if !strings.Contains(string(b), "os.system(1)") {
		t.Errorf("accepted, it lands as shown: %q", b)
	}
}
