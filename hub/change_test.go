package hub_test

import (
	"os"
	"path/filepath"
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

// writeWith plans one files.write of path with content and has the
// spoke call it.
func writeWith(path, content string) ollamatest.Script {
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
		a.Set("content", content)
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "write", Arguments: a}}}}
	}
}

// The dialog of a write shows the change as the hub's diff: over a file
// that exists, the lines removed and added with a few around them; for a
// new file, its lines; bounded, for a file too large, said so. The
// change is computed from the file as it is, not from what any model
// said about it.
func TestTheWriteDialogShowsTheChange(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := range 2000 {
		long.WriteString("line ")
		long.WriteString(strings.Repeat("x", i%7))
		long.WriteString("\n")
	}
	cases := []struct {
		name, before, content string
		exists                bool
		removed, added        int
		has, lacks            []string // "op text"
		more, unshown         bool
	}{
		{name: "edit", before: "alpha\nbeta\ngamma\ndelta\n", content: "alpha\nBETA\ngamma\ndelta\nepsilon\n", exists: true,
			removed: 1, added: 2, has: []string{"- beta", "+ BETA", "+ epsilon", "  alpha", "@ from line 1"}, lacks: []string{"- alpha"}},
		{name: "new", content: "one\ntwo\n", added: 2, has: []string{"+ one", "+ two"}, lacks: []string{"@ "}},
		{name: "long new", content: long.String(), added: 2000, more: true},
		{name: "too large", before: strings.Repeat("y", 300<<10), content: "short\n", exists: true, unshown: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			if c.exists {
				if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(c.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := permissionstest.NewPrompter(permissions.AnswerDeny)
			rig := hubtest.New(t, hubtest.Config{Script: writeWith("notes.txt", c.content), Apps: []apps.App{files.New(ws, files.Options{})}, Prompter: p, Rules: allowExec})
			chat, _ := rig.Op.NewChat(false)
			askWithin(t, rig.Op, chat.ID, "write the notes", 20*time.Second)
			var ch *permissions.Change
			for _, r := range p.Calls() {
				if r.Function == "write" {
					ch = r.Change
				}
			}
			if ch == nil {
				t.Fatalf("the write's dialog carries no change: %+v", p.Calls())
			}
			if ch.Path != "notes.txt" || ch.Exists != c.exists || ch.Field != "content" {
				t.Fatalf("change %+v", ch)
			}
			if c.unshown {
				if ch.Unshown == "" || len(ch.Lines) > 0 {
					t.Fatalf("a file too large to show: %+v", ch)
				}
				return
			}
			if ch.Removed != c.removed || ch.Added != c.added {
				t.Fatalf("removed %d added %d, want %d %d", ch.Removed, ch.Added, c.removed, c.added)
			}
			var got []string
			for _, l := range ch.Lines {
				got = append(got, l.Op+" "+l.Text)
			}
			all := "\n" + strings.Join(got, "\n") + "\n"
			for _, h := range c.has {
				if !strings.Contains(all, "\n"+h+"\n") {
					t.Errorf("lacks %q:%s", h, all)
				}
			}
			for _, h := range c.lacks {
				if strings.Contains(all, "\n"+h) {
					t.Errorf("has %q:%s", h, all)
				}
			}
			if c.more != (ch.More > 0) || len(ch.Lines) > 400 {
				t.Errorf("%d lines shown, %d more", len(ch.Lines), ch.More)
			}
			// Denied: the file is as it was.
			if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); c.exists && (err != nil || string(b) != c.before) {
				t.Errorf("a denied write changed the file")
			}
		})
	}
}
