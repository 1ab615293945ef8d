package hub_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// writeScript plans one files.write of path and has the spoke call it.
func writeScript(path string) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{bind(step("s1", "files.write", "write the file"), "path", path)}})
		}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return ollamatest.Text("Done.")
			}
		}
		a := api.NewToolCallFunctionArguments()
		a.Set("path", path)
		a.Set("content", "#!/bin/sh\necho planted\n")
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "write", Arguments: a}}}}
	}
}

// A write of the files app to a path that another program runs later is
// never routine, and its dialog says — in the hub's words, from the one
// list — what runs the file ("git runs this file before every commit"),
// at any depth and in any spelling of the path; an ordinary file's
// dialog says nothing of the kind. A link in the workspace cannot make
// the write land on another file than the one the dialog names: the
// write through it is refused, and the hook stays as it was.
func TestWritesThatRunLaterSaySo(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	hook := filepath.Join(ws, ".git", "hooks", "pre-commit")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git/hooks/pre-commit", filepath.Join(ws, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		says string // "" for nothing of the kind
	}{
		{".git/hooks/pre-commit", "git runs this file before every commit"},
		{"./.git/../.git/hooks/pre-commit", "git runs this file before every commit"},
		{"sub/.git/config", "core.fsmonitor"},
		{".envrc", "direnv runs this file when you enter the folder"},
		{".vscode/tasks.json", "VS Code runs the tasks"},
		{"docs/readme.txt", ""},
		{"notes.txt", ""}, // a link to the hook: refused below
	}
	for _, c := range cases {
		// Allowed, each write goes ahead; the hook is as it was before
		// the one through the link.
		if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		p := permissionstest.NewPrompter(permissions.AnswerOnce)
		rig := hubtest.New(t, hubtest.Config{Script: writeScript(c.path), Apps: []apps.App{files.New(ws, files.Options{})}, Prompter: p, Rules: allowExec})
		chat, _ := rig.Op.NewChat(false)
		askWithin(t, rig.Op, chat.ID, "write the file "+c.path, 20*time.Second)
		var asked *permissions.Request
		for _, r := range p.Calls() {
			if r.Function == "write" {
				asked = &r
			}
		}
		if asked == nil {
			t.Fatalf("%s: no dialog for the write: %+v", c.path, p.Calls())
		}
		runsLater := slices.Contains(asked.Concerns, permissions.ConcernRunsLater)
		if c.says == "" {
			if runsLater || strings.Contains(asked.Warning, "runs") {
				t.Errorf("%s: an ordinary file's dialog says %q", c.path, asked.Warning)
			}
		} else if !runsLater || !strings.Contains(asked.Warning, c.says) || asked.Routine() {
			t.Errorf("%s: the dialog must say %q, and not be routine: %q %v", c.path, c.says, asked.Warning, asked.Concerns)
		}
	}
	if b, _ := os.ReadFile(hook); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the write through notes.txt, a link, reached the hook: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "notes.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("notes.txt must still be the link it was")
	}
}
