package serve_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// served runs an engine on a fresh data directory behind a serving
// process's socket, in this process, until the test ends.
func served(t testing.TB, script ollamatest.Script, fingerprint string) config.Config {
	cfg, _ := servedEngine(t, script, fingerprint)
	return cfg
}

// servedEngine is served, with the engine.
func servedEngine(t testing.TB, script ollamatest.Script, fingerprint string) (config.Config, *engine.Engine) {
	t.Helper()
	cfg, eng := openEngine(t, script)
	serveEngine(t, eng, cfg.DataDir, fingerprint)
	return cfg, eng
}

// serveEngine serves eng's data directory dir, in this process, until
// the test ends (then the engine is closed), and returns once it serves.
func serveEngine(t testing.TB, eng *engine.Engine, dir, fingerprint string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Serve(ctx, eng, serve.Options{Fingerprint: fingerprint, Version: "test"}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		eng.Close()
	})
	waitServing(t, dir)
}

// openEngine opens an engine over a scripted Ollama on a fresh data
// directory, the clock app enabled.
func openEngine(t testing.TB, script ollamatest.Script) (config.Config, *engine.Engine) {
	t.Helper()
	srv := ollamatest.NewScripted(t, script, "m")
	// A short folder: the socket path must fit.
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Ollama: config.Ollama{Host: srv.Host()}, Enable: []string{"clock"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The tests of sessions count dialogs: without the default grants.
	if err := eng.Broker.RevokeAll(""); err != nil {
		t.Fatal(err)
	}
	return cfg, eng
}

// waitServing waits until dir is served.
func waitServing(t testing.TB, dir string) {
	t.Helper()
	for i := 0; ; i++ {
		if _, err := serve.Query(dir); err == nil {
			return
		} else if i > 500 {
			t.Fatalf("not serving: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func connect(t testing.TB, cfg config.Config, fingerprint string, p permissions.Prompter) *serve.Client {
	t.Helper()
	c, err := serve.Connect(context.Background(), serve.ConnectOptions{DataDir: cfg.DataDir, Fingerprint: fingerprint, Version: "test", Kind: "test", Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type promptFunc func(context.Context, permissions.Request) (permissions.Decision, error)

func (f promptFunc) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	return f(ctx, r)
}

var clockPlan = ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "clock.now", "query": "what time is it", "depends_on": []string{}}}})

// A turn's events reach its client in order, with its answer last, and
// the turn it gets is the one kept.
func TestATurnAcrossTheSocket(t *testing.T) {
	cfg := served(t, ollamatest.Planned(ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}}),
		func(*api.ChatRequest) ollamatest.Reply {
			return ollamatest.Reply{Chunks: []string{"one ", "two ", "three"}}
		}), "fp")
	c := connect(t, cfg, "fp", nil)
	chat, err := c.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []hub.EventKind
	var tokens string
	turn, err := c.AskWith(context.Background(), chat.ID, "hello", hub.AskOptions{}, func(ev hub.Event) {
		kinds = append(kinds, ev.Kind)
		if ev.Kind == hub.EventToken {
			tokens += ev.Text
		}
	})
	if err != nil || turn.Answer != "one two three" || tokens != "one two three" {
		t.Fatalf("turn %+v err %v tokens %q", turn, err, tokens)
	}
	if kinds[len(kinds)-1] != hub.EventAnswer {
		t.Fatalf("events %v: the answer must come last", kinds)
	}
	kept, _, err := c.TurnsBefore(chat.ID, 0, 1)
	if err != nil || len(kept) != 1 || kept[0].Answer != turn.Answer || kept[0].Status != memory.StatusOK {
		t.Fatalf("kept %+v %v", kept, err)
	}
}

// A permission dialog goes to the client whose turn asked, never to
// another; a client's private chat is gone once it leaves.
func TestSessionsAreApart(t *testing.T) {
	cfg, eng := servedEngine(t, ollamatest.Planned(clockPlan, ollamatest.Gullible()), "fp")
	asked := map[string]int{}
	prompter := func(name string) permissions.Prompter {
		return promptFunc(func(_ context.Context, r permissions.Request) (permissions.Decision, error) {
			asked[name]++
			return permissions.Decision{RequestID: r.ID, Answer: permissions.AnswerSession, Allowed: true, Source: permissions.SourceUser}, nil
		})
	}
	a := connect(t, cfg, "fp", prompter("a"))
	b := connect(t, cfg, "fp", prompter("b"))
	chat, _ := a.NewChat(false)
	if _, err := a.Ask(context.Background(), chat.ID, "what time is it", nil); err != nil {
		t.Fatal(err)
	}
	if asked["a"] != 1 || asked["b"] != 0 {
		t.Fatalf("dialogs: %v, want a's alone", asked)
	}
	// a's session grant is a's: b is asked again, a is not.
	chatB, _ := b.NewChat(false)
	if _, err := b.Ask(context.Background(), chatB.ID, "what time is it", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Ask(context.Background(), chat.ID, "and now?", nil); err != nil {
		t.Fatal(err)
	}
	if asked["a"] != 1 || asked["b"] != 1 {
		t.Fatalf("dialogs: %v, want one each", asked)
	}
	if len(b.Grants()) != 1 || len(a.Grants()) != 1 || a.Grants()[0].ID == b.Grants()[0].ID {
		t.Fatalf("each session lists its own session grant: a %v b %v", a.Grants(), b.Grants())
	}
	// Trusted mode is a session's own.
	a.SetTrusted(true)
	if !a.Trusted() || b.Trusted() {
		t.Fatal("trusted mode must be the session's own")
	}

	priv, err := a.NewChat(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Chat(priv.ID); err != nil {
		t.Fatalf("the private chat lives while its client does: %v", err)
	}
	a.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := eng.Hub.Chat(priv.ID)
		if errors.Is(err, hub.ErrNoChat) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the private chat of a client gone: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A private chat is its session's: another session does not see it in
// the list, cannot read it, ask in it (the model never gets its words)
// or delete it. A session grant is its session's: another does not list
// it and cannot revoke it; a permanent grant is the user's, from any
// session.
func TestWhatIsASessionsOwn(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	script := ollamatest.Planned(ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}}),
		func(req *api.ChatRequest) ollamatest.Reply {
			mu.Lock()
			for _, m := range req.Messages {
				seen = append(seen, m.Content)
			}
			mu.Unlock()
			return ollamatest.Text("noted")
		})
	cfg, eng := servedEngine(t, script, "fp")
	a := connect(t, cfg, "fp", promptFunc(func(_ context.Context, r permissions.Request) (permissions.Decision, error) {
		answer := permissions.AnswerSession
		if r.Object == "notes" {
			answer = permissions.AnswerPermanent
		}
		return permissions.Decision{Answer: answer}, nil
	}))
	b := connect(t, cfg, "fp", nil)
	priv, err := a.NewChat(true)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "my HIV test came back positive"
	if _, err := a.Ask(context.Background(), priv.ID, secret, nil); err != nil {
		t.Fatal(err)
	}
	list, err := b.Chats()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.ID == priv.ID {
			t.Fatalf("another session lists the private chat %+v", c)
		}
	}
	if own, _ := a.Chats(); !slices.ContainsFunc(own, func(c hub.Chat) bool { return c.ID == priv.ID }) {
		t.Fatal("the private chat's own session must list it")
	}
	if _, err := b.Chat(priv.ID); !errors.Is(err, hub.ErrNoChat) {
		t.Fatalf("show: %v", err)
	}
	if _, _, err := b.TurnsBefore(priv.ID, 0, 10); !errors.Is(err, hub.ErrNoChat) {
		t.Fatalf("turns: %v", err)
	}
	if _, err := b.Turns(priv.ID); !errors.Is(err, hub.ErrNoChat) {
		t.Fatalf("turns: %v", err)
	}
	mu.Lock()
	seen = nil
	mu.Unlock()
	if _, err := b.Ask(context.Background(), priv.ID, "what did I tell you?", nil); !errors.Is(err, hub.ErrNoChat) {
		t.Fatalf("ask: %v", err)
	}
	mu.Lock()
	for _, m := range seen {
		if strings.Contains(m, secret) {
			t.Fatalf("the model read the private chat for another session: %q", m)
		}
	}
	mu.Unlock()
	if _, err := b.Retry(context.Background(), priv.ID, 1, nil); !errors.Is(err, hub.ErrNoChat) {
		t.Fatalf("retry: %v", err)
	}
	if err := b.DeleteChat(priv.ID); !errors.Is(err, hub.ErrNoChat) {
		t.Fatalf("delete: %v", err)
	}
	if err := b.NoteRevealed(priv.ID, 1, "x"); !errors.Is(err, hub.ErrNoChat) {
		t.Fatalf("note: %v", err)
	}
	if _, err := a.Chat(priv.ID); err != nil {
		t.Fatalf("after another session's attempts the chat must still be its own: %v", err)
	}

	// grants, as a's dialogs answer them: a session grant, a permanent one
	asA := permissions.WithSession(context.Background(), a.Welcome().Session)
	for _, obj := range []string{"clock", "notes"} {
		if d, err := eng.Broker.Request(asA, permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: obj}); err != nil || !d.Allowed {
			t.Fatalf("%s: %+v %v", obj, d, err)
		}
	}
	var aGrant, permanent string
	for _, g := range a.Grants() {
		if g.Session != "" {
			aGrant = g.ID
		} else if g.Permanent {
			permanent = g.ID
		}
	}
	if aGrant == "" || permanent == "" {
		t.Fatalf("a's grants: %+v", a.Grants())
	}
	if !slices.ContainsFunc(b.Grants(), func(g permissions.Grant) bool { return g.ID == permanent }) {
		t.Fatal("a permanent grant is the user's: every session lists it")
	}
	if slices.ContainsFunc(b.Grants(), func(g permissions.Grant) bool { return g.ID == aGrant }) {
		t.Fatal("another session lists a's session grant")
	}
	if err := b.Revoke(aGrant); !errors.Is(err, permissions.ErrUnknownGrant) {
		t.Fatalf("another session revoked a's session grant: %v", err)
	}
	if err := b.RevokeAll(""); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(a.Grants(), func(g permissions.Grant) bool { return g.ID == aGrant }) {
		t.Fatal("another session's revoke --all took a's session grant")
	}
	if slices.ContainsFunc(a.Grants(), func(g permissions.Grant) bool { return g.ID == permanent }) {
		t.Fatal("revoke --all from any session takes the permanent grants")
	}
	if err := a.Revoke(aGrant); err != nil {
		t.Fatalf("its own session revokes it: %v", err)
	}
}

// Errors cross the socket typed: errors.Is and errors.As hold on the
// client as in the serving process, with the same words.
func TestErrorsCrossTyped(t *testing.T) {
	cfg := served(t, ollamatest.Planned(ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}}),
		func(*api.ChatRequest) ollamatest.Reply {
			return ollamatest.Reply{Chunks: []string{"partial "}, CutAfter: 1}
		}), "fp")
	c := connect(t, cfg, "fp", nil)
	if _, err := c.Chat("no-such-chat"); !errors.Is(err, hub.ErrNoChat) || err.Error() != "no such chat: no-such-chat" {
		t.Fatalf("an unknown chat: %v", err)
	}
	if err := c.Revoke("no-such-grant"); !errors.Is(err, permissions.ErrUnknownGrant) {
		t.Fatalf("an unknown grant: %v", err)
	}
	chat, _ := c.NewChat(false)
	turn, err := c.Ask(context.Background(), chat.ID, "hello", nil)
	var cut *llm.StreamCutError
	if !errors.As(err, &cut) || cut.Partial.Message.Content != "partial " || turn.Status != memory.StatusCut || !strings.Contains(err.Error(), "cut off") {
		t.Fatalf("a cut stream: %v (turn %+v)", err, turn)
	}
}

// A client of another configuration is told so while the serving
// process is busy, and replaces it when it is not.
func TestAnotherConfiguration(t *testing.T) {
	cfg := served(t, ollamatest.Gullible(), "one")
	busy := connect(t, cfg, "one", nil)
	started := 0
	start := func() (<-chan error, error) { started++; return nil, errors.New("no start in this test") }
	_, err := serve.Connect(context.Background(), serve.ConnectOptions{DataDir: cfg.DataDir, Fingerprint: "two", Version: "test", Start: start})
	if err == nil || !strings.Contains(err.Error(), "configuration differs") || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a busy process of another configuration: %v", err)
	}
	busy.Close()
	_, err = serve.Connect(context.Background(), serve.ConnectOptions{DataDir: cfg.DataDir, Fingerprint: "two", Version: "test", Start: start})
	if started != 1 || err == nil || !strings.Contains(err.Error(), "no start in this test") {
		t.Fatalf("an idle process of another configuration is replaced (then one started): started %d, err %v", started, err)
	}
	if _, err := serve.Query(cfg.DataDir); !errors.Is(err, serve.ErrNotServed) {
		t.Fatalf("the replaced process must be gone: %v", err)
	}
}

// Turns of different chats do not wait for each other, from any client;
// a second request to a busy chat gets the busy error.
func TestChatsRunAtOnce(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	entered := make(chan string, 4)
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}})
	cfg := served(t, ollamatest.Planned(plan, func(req *api.ChatRequest) ollamatest.Reply {
		q := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(q, "hold") {
			select {
			case entered <- q:
			default:
			}
			<-release
		}
		return ollamatest.Text("done")
	}), "fp")
	a := connect(t, cfg, "fp", nil)
	b := connect(t, cfg, "fp", nil)
	t.Cleanup(free) // (after the server's): a failed check must not leave the held turn waiting
	chat, _ := a.NewChat(false)
	held := make(chan error, 1)
	go func() {
		_, err := a.Ask(context.Background(), chat.ID, "hold on", nil)
		held <- err
	}()
	<-entered
	collections := serve.CollectionsStarted()
	// Another chat answers while the first is held.
	other, _ := b.NewChat(false)
	if turn, err := b.Ask(context.Background(), other.ID, "quick one", nil); err != nil || turn.Answer != "done" {
		t.Fatalf("another chat must not wait: %+v %v", turn, err)
	}
	if _, err := b.Ask(context.Background(), chat.ID, "me too", nil); !errors.Is(err, hub.ErrBusy) {
		t.Fatalf("a busy chat: %v, want the busy error", err)
	}
	// The serving process collects only once no turn runs (collect_test.go).
	if got := serve.CollectionsStarted(); got != collections {
		t.Fatalf("a turn ended while another ran: %d collections started, want none (%d)", got, collections)
	}
	free()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if got := serve.CollectionsStarted(); got != collections+1 {
		t.Fatalf("after the last turn ended: %d collections started, want %d", got, collections+1)
	}
}

// /model switches the models of the session that asks, checked against
// what Ollama has, with another session connected or not.
func TestModelSwitchAcrossTheSocket(t *testing.T) {
	srvScript := ollamatest.Gullible()
	cfg := served(t, srvScript, "fp")
	a := connect(t, cfg, "fp", nil)
	b := connect(t, cfg, "fp", nil)
	list, err := a.Installed(context.Background())
	if err != nil || len(list) == 0 {
		t.Fatalf("installed: %v %v", list, err)
	}
	if err := a.SetModel(context.Background(), "no-such-model"); !errors.Is(err, engine.ErrNotInstalled) {
		t.Fatalf("an unknown model: %v", err)
	}
	before, _ := b.Current()
	if err := a.SetModel(context.Background(), list[0].Name); err != nil {
		t.Fatal(err)
	}
	if h, _ := a.Current(); h != list[0].Name {
		t.Fatalf("current %q, want %q", h, list[0].Name)
	}
	if h, _ := b.Current(); h != before {
		t.Fatalf("the other session's model became %q (was %q)", h, before)
	}
}

// A serving process whose socket is removed (its data directory deleted)
// ends, saying so, rather than serving no one for ever.
func TestSocketRemoved(t *testing.T) {
	cfg, eng := openEngine(t, ollamatest.Gullible())
	defer eng.Close()
	dir := cfg.DataDir
	done := make(chan error, 1)
	go func() {
		done <- serve.Serve(context.Background(), eng, serve.Options{Fingerprint: "fp", Idle: time.Hour})
	}()
	waitServing(t, dir)
	if err := os.Remove(serve.SocketPath(dir)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, serve.ErrOrphaned) {
			t.Fatalf("Serve: %v, want ErrOrphaned", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still serving a removed socket")
	}
}
