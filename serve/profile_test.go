package serve_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// listsFiles is a model that plans files.list for any request, lists the
// workspace in the files spoke, and answers with what the listing said.
func listsFiles(req *api.ChatRequest) ollamatest.Reply {
	switch {
	case len(req.Format) > 0:
		return ollamatest.JSON(map[string]any{"steps": []map[string]any{
			{"id": "s1", "functionality": "files.list", "query": "list the workspace", "depends_on": []string{}}}})
	case len(req.Tools) > 0:
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return ollamatest.Text("listing: " + last.Content)
		}
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "list", Arguments: toolArgs(map[string]any{"path": ""})}}}}
	}
	last := req.Messages[len(req.Messages)-1]
	return ollamatest.Text("answer: " + last.Content)
}

func toolArgs(m map[string]any) api.ToolCallFunctionArguments {
	var a api.ToolCallFunctionArguments
	for k, v := range m {
		a.Set(k, v)
	}
	return a
}

// connectAs opens a session in folder with the apps enable and the models m.
func connectAs(t *testing.T, cfg config.Config, folder string, enable []string, m engine.Models, p permissions.Prompter) *serve.Client {
	t.Helper()
	c, err := serve.Connect(context.Background(), serve.ConnectOptions{DataDir: cfg.DataDir, Fingerprint: "fp", Version: "test", Kind: "test",
		Prompter: p, Profile: &engine.ProfileSpec{Workspace: folder, Enable: enable}, Models: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Sessions of one serving process each run in their own folder, with
// their own apps and their own models: a turn of one lists its folder's
// files, not the other's; /model in one changes nothing in the other;
// the apps they list are their own; chats are the data directory's.
func TestSessionsRunWithTheirOwnFolderAppsAndModels(t *testing.T) {
	srv := ollamatest.NewScripted(t, listsFiles, "m", "m2")
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Ollama: config.Ollama{Host: srv.Host()}, Enable: []string{"clock"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	serveEngine(t, eng, cfg.DataDir, "fp")

	one, two := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(one, "only-in-one.txt"), []byte("1"), 0o600)
	os.WriteFile(filepath.Join(two, "only-in-two.txt"), []byte("2"), 0o600)
	allow := promptFunc(func(context.Context, permissions.Request) (permissions.Decision, error) {
		return permissions.Decision{Answer: permissions.AnswerOnce, Source: permissions.SourceUser}, nil
	})
	a := connectAs(t, cfg, one, []string{"files"}, engine.Models{Hub: "m", Spoke: "m"}, allow)
	b := connectAs(t, cfg, two, []string{"files", "calc"}, engine.Models{Hub: "m", Spoke: "m"}, allow)

	names := func(c *serve.Client) []string {
		list, err := c.Apps()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ai := range list {
			out = append(out, ai.Manifest.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(a); !slices.Equal(got, []string{"files"}) {
		t.Errorf("a's apps: %v", got)
	}
	if got := names(b); !slices.Equal(got, []string{"calc", "files"}) {
		t.Errorf("b's apps: %v", got)
	}

	// /model in a: a's calls go to m2 from now on, b's stay on m.
	if err := a.SetModel(context.Background(), "m2"); err != nil {
		t.Fatal(err)
	}
	if h, s := a.Current(); h != "m2:latest" && h != "m2" || s != h {
		t.Errorf("a's models: %s / %s", h, s)
	}
	if h, s := b.Current(); h != "m" || s != "m" {
		t.Errorf("b's models after a's /model: %s / %s", h, s)
	}

	ask := func(c *serve.Client) string {
		chat, err := c.NewChat(false)
		if err != nil {
			t.Fatal(err)
		}
		before := len(srv.Requests())
		turn, err := c.Ask(context.Background(), chat.ID, "what is in my folder?", nil)
		if err != nil {
			t.Fatal(err)
		}
		models := map[string]bool{}
		for _, r := range srv.Requests()[before:] {
			models[r.Model] = true
		}
		var ms []string
		for m := range models {
			ms = append(ms, m)
		}
		slices.Sort(ms)
		return strings.Join(ms, ",") + " | " + turn.Answer
	}
	gotA, gotB := ask(a), ask(b)
	if !strings.Contains(gotA, "only-in-one.txt") || strings.Contains(gotA, "only-in-two") || !strings.HasPrefix(gotA, "m2") || strings.HasPrefix(gotA, "m,") {
		t.Errorf("a's turn (models | answer): %s", gotA)
	}
	if !strings.Contains(gotB, "only-in-two.txt") || strings.Contains(gotB, "only-in-one") || !strings.HasPrefix(gotB, "m |") {
		t.Errorf("b's turn (models | answer): %s", gotB)
	}

	// The chats are the data directory's: each session lists both.
	for _, c := range []*serve.Client{a, b} {
		cs, err := c.Chats()
		if err != nil || len(cs) != 2 {
			t.Errorf("chats: %d %v", len(cs), err)
		}
	}
	// A profile no session uses any more is stopped; the process's own stays.
	if n := len(eng.Profiles()); n != 3 {
		t.Errorf("%d profiles running, want 3 (the process's and two sessions')", n)
	}
	a.Close()
	waitFor(t, func() bool { return len(eng.Profiles()) == 2 })
}

// A chat has one turn at a time even when its sessions run other
// profiles.
func TestOneTurnAtATimeAcrossProfiles(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan string, 4)
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}})
	cfg := served(t, ollamatest.Planned(plan, func(req *api.ChatRequest) ollamatest.Reply {
		q := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(q, "hold") {
			entered <- q
			<-release
		}
		return ollamatest.Text("done")
	}), "fp")
	a := connectAs(t, cfg, t.TempDir(), []string{"clock"}, engine.Models{}, nil)
	b := connectAs(t, cfg, t.TempDir(), []string{"calc"}, engine.Models{}, nil)
	chat, err := a.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := a.Ask(context.Background(), chat.ID, "hold on", nil)
		held <- err
	}()
	<-entered
	if _, err := b.Ask(context.Background(), chat.ID, "me too", nil); !errors.Is(err, hub.ErrBusy) {
		t.Errorf("a second turn in the chat from another profile: %v, want the busy error", err)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if turn, err := b.Ask(context.Background(), chat.ID, "now me", nil); err != nil || turn.Answer != "done" {
		t.Errorf("after it: %+v %v", turn, err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for i := 0; !ok(); i++ {
		if i > 500 {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
