package sandbox_test

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// The list is matched at any depth and without regard to case; every
// entry says who runs it.
func TestProtects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rel  string
		want string // the entry that says why; "" for none
	}{
		{".git", ".git"},
		{".git/hooks/pre-commit", ".git/hooks"},
		{"a/b/.git/config", ".git/config"},
		{"A/.GIT/HOOKS/x", ".git/hooks"},
		{".git/objects/ab/cd", ".git"},
		{".git/modules/x/objects/y", ".git/modules"},
		{"docs/.envrc", ".envrc"},
		{".vscode/tasks.json", ".vscode"},
		{"src/main.go", ""},
		{".gitignore", ""},
		{"my.git/config", ""},
		{"x/.bashrc", ".bashrc"},
		{"./.mcp.json", ".mcp.json"},
	}
	for _, c := range cases {
		p, ok := sandbox.Protects(c.rel)
		if got := map[bool]string{true: p.Path, false: ""}[ok]; got != c.want {
			t.Errorf("Protects(%q) = %q, want %q", c.rel, got, c.want)
		}
		if ok && p.Runs == "" {
			t.Errorf("%s: says nothing of what runs it", p.Path)
		}
	}
}

// What a dialog says of a protected file: a hook by when git runs it,
// any other by its entry's words.
func TestRuns(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]string{
		".git/hooks/pre-commit":        "git runs this file before every commit",
		"sub/.git/hooks/post-checkout": "git runs this file after every checkout",
		".git/hooks/pre-commit.sample": "git runs the files in this folder",
		".git/config":                  "core.fsmonitor",
		".envrc":                       "direnv runs this file",
		"notes.txt":                    "",
	} {
		got, ok := sandbox.Runs(rel)
		if ok != (want != "") || !strings.Contains(got, want) {
			t.Errorf("Runs(%q) = %q, %v; want %q", rel, got, ok, want)
		}
	}
}
