package hub_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

func TestMain(m *testing.M) { testenv.Main(m, true) }

const (
	hubModel   = "hub-model"
	spokeModel = "spoke-model"
)

var chatPlan = ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "q", "depends_on": []string{}}}})

type rig struct {
	srv   *ollamatest.Scripted
	store *memory.Store
	op    *hub.Operator
	dir   string
	logs  *bytes.Buffer
}

func newRig(t *testing.T, script ollamatest.Script) *rig {
	t.Helper()
	srv := ollamatest.NewScripted(t, script, hubModel, spokeModel)
	dir := t.TempDir()
	store, err := memory.Open(dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, logs}, nil))
	hubClient, _ := llm.New(llm.Config{Host: srv.Host(), Model: hubModel}, nil)
	op, err := hub.New(hub.Options{
		Store:    store,
		HubModel: hubClient,
		SpokeModel: func(app string) (spokes.Model, error) {
			return llm.New(llm.Config{Host: srv.Host(), Model: spokeModel}, nil)
		},
		History: 4, SpokeHistory: 4, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		op.Close()
		store.Close()
	})
	return &rig{srv: srv, store: store, op: op, dir: dir, logs: logs}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func collect(events *[]hub.Event) func(hub.Event) {
	return func(e hub.Event) { *events = append(*events, e) }
}

func kinds(events []hub.Event) string {
	var b []string
	for _, e := range events {
		if len(b) == 0 || b[len(b)-1] != string(e.Kind) {
			b = append(b, string(e.Kind))
		}
	}
	return strings.Join(b, ",")
}

func TestAskPlansThenVanillaSpokeAnswers(t *testing.T) {
	t.Parallel()
	r := newRig(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Chunks: []string{"Hello ", "there."}, PromptTokens: 20, EvalTokens: 2}
	}))
	chat, err := r.op.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	var events []hub.Event
	turn, err := r.op.Ask(context.Background(), chat.ID, "hi bulkhead", collect(&events))
	if err != nil {
		t.Fatal(err)
	}
	if turn.Answer != "Hello there." || turn.Status != memory.StatusOK {
		t.Fatalf("turn %+v", turn)
	}
	if got := kinds(events); got != "started,plan,spoke,token,spoke,answer" {
		t.Fatalf("event order %s", got)
	}
	if p := events[1].Plan; len(p.Steps) != 1 || p.Steps[0].App != hub.VanillaApp || p.Fallback {
		t.Fatalf("plan %+v", p)
	}
	last := events[len(events)-1]
	if last.Text != "Hello there." || last.Usage.Calls != 2 || last.Usage.EvalTokens < 2 {
		t.Fatalf("answer event %+v", last)
	}
	reqs := r.srv.Requests()
	if len(reqs) != 2 || reqs[0].Model != hubModel || len(reqs[0].Format) == 0 || reqs[1].Model != spokeModel || len(reqs[1].Format) != 0 {
		t.Fatalf("want a planner call on the hub model then a spoke call: %+v", reqs)
	}
	// The user's words reach the spoke verbatim.
	if msgs := reqs[1].Messages; msgs[len(msgs)-1].Content != "hi bulkhead" {
		t.Fatalf("spoke got %q", msgs[len(msgs)-1].Content)
	}
	turns, err := r.op.Turns(chat.ID)
	if err != nil || len(turns) != 1 || turns[0].Answer != "Hello there." || turns[0].Plan == nil {
		t.Fatalf("logged turns %+v %v", turns, err)
	}
	c, _ := r.op.Chat(chat.ID)
	if c.Title != "hi bulkhead" {
		t.Fatalf("title %q", c.Title)
	}
}

func TestWorkingMemoryAndPlannerView(t *testing.T) {
	t.Parallel()
	n := 0
	r := newRig(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		n++
		if n == 1 {
			return ollamatest.Text("SECRET-ANSWER-ONE")
		}
		return ollamatest.Text("second")
	}))
	chat, _ := r.op.NewChat(false)
	for _, q := range []string{"first question", "second question"} {
		if _, err := r.op.Ask(context.Background(), chat.ID, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := r.srv.Requests()
	plan2, spoke2 := reqs[2], reqs[3]
	var spokeCtx, planCtx string
	for _, m := range spoke2.Messages {
		spokeCtx += m.Role + ":" + m.Content + "\n"
	}
	for _, m := range plan2.Messages {
		planCtx += m.Content + "\n"
	}
	if !strings.Contains(spokeCtx, "user:first question") || !strings.Contains(spokeCtx, "assistant:SECRET-ANSWER-ONE") {
		t.Fatalf("spoke's working memory lacks the last turn:\n%s", spokeCtx)
	}
	if !strings.Contains(planCtx, "first question") || strings.Contains(planCtx, "SECRET-ANSWER-ONE") {
		t.Fatalf("planner must see the user's past words and never an answer:\n%s", planCtx)
	}
}

func TestUnusablePlanIsRetriedOnceThenFallsBack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		plans    []ollamatest.Reply
		fallback bool
	}{
		{"good second try", []ollamatest.Reply{ollamatest.Text("not json"), chatPlan}, false},
		{"two bad tries", []ollamatest.Reply{ollamatest.Text("not json"), ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "a", "functionality": "wire_money", "query": "x", "depends_on": []string{}}}})}, true},
		{"empty plan", []ollamatest.Reply{ollamatest.JSON(map[string]any{"steps": []any{}}), ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "a", "functionality": "chat", "depends_on": []string{"later"}}}})}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plans := tc.plans
			r := newRig(t, func(req *api.ChatRequest) ollamatest.Reply {
				if len(req.Format) > 0 {
					p := plans[0]
					plans = plans[1:]
					return p
				}
				return ollamatest.Text("answered")
			})
			chat, _ := r.op.NewChat(false)
			var events []hub.Event
			turn, err := r.op.Ask(context.Background(), chat.ID, "do it", collect(&events))
			if err != nil {
				t.Fatal(err)
			}
			if turn.Answer != "answered" || turn.Plan.Fallback != tc.fallback {
				t.Fatalf("turn %+v plan %+v", turn, turn.Plan)
			}
			formatCalls := 0
			for _, q := range r.srv.Requests() {
				if len(q.Format) > 0 {
					formatCalls++
				}
			}
			if formatCalls != 2 {
				t.Fatalf("planner called %d times, want 2", formatCalls)
			}
			if logged := strings.Contains(r.logs.String(), "plan fallback"); logged != tc.fallback {
				t.Fatalf("fallback logged = %v, want %v:\n%s", logged, tc.fallback, r.logs)
			}
		})
	}
}

func TestStreamCutKeepsPartialAndRetries(t *testing.T) {
	t.Parallel()
	answers := []ollamatest.Reply{{Chunks: []string{"half ", "an ", "answer"}, CutAfter: 2}, ollamatest.Text("whole answer")}
	r := newRig(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		a := answers[0]
		answers = answers[1:]
		return a
	}))
	chat, _ := r.op.NewChat(false)
	var events []hub.Event
	turn, err := r.op.Ask(context.Background(), chat.ID, "tell me", collect(&events))
	var cut *llm.StreamCutError
	if !errors.As(err, &cut) {
		t.Fatalf("want a cut, got %v", err)
	}
	if turn.Status != memory.StatusCut || turn.Answer != "half an " || !turn.Retryable() {
		t.Fatalf("cut turn %+v", turn)
	}
	if last := events[len(events)-1]; last.Kind != hub.EventError || last.Text != "half an " {
		t.Fatalf("error event must carry the partial: %+v", last)
	}
	turns, _ := r.op.Turns(chat.ID)
	if turns[0].Status != memory.StatusCut || turns[0].Answer != "half an " {
		t.Fatalf("logged %+v", turns[0])
	}
	turn, err = r.op.Retry(context.Background(), chat.ID, turn.Seq, nil)
	if err != nil || turn.Answer != "whole answer" || turn.Status != memory.StatusOK {
		t.Fatalf("retry: %+v %v", turn, err)
	}
	turns, _ = r.op.Turns(chat.ID)
	if len(turns) != 1 || turns[0].Answer != "whole answer" {
		t.Fatalf("retry must replace the turn in place: %+v", turns)
	}
	// The cut attempt never enters the spoke's working memory.
	last := r.srv.Requests()[len(r.srv.Requests())-1]
	for _, m := range last.Messages {
		if strings.Contains(m.Content, "half an") {
			t.Fatalf("cut answer leaked into working memory: %+v", last.Messages)
		}
	}
}

func TestCancelStopsTheSpoke(t *testing.T) {
	t.Parallel()
	r := newRig(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Chunks: []string{"partial"}, Hang: true}
	}))
	chat, _ := r.op.NewChat(false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var turn hub.Turn
	var err error
	go func() {
		defer close(done)
		turn, err = r.op.Ask(ctx, chat.ID, "long one", func(e hub.Event) {
			if e.Kind == hub.EventToken {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not stop the turn")
	}
	if !errors.Is(err, context.Canceled) || turn.Status != memory.StatusCancelled || turn.Answer != "partial" {
		t.Fatalf("turn %+v err %v", turn, err)
	}
	if w := r.op.Working(); len(w) != 0 {
		t.Fatalf("spokes still working: %v", w)
	}
	// The chat is free again.
	if _, err := r.op.Retry(ctx, chat.ID, turn.Seq, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("chat not free after cancel: %v", err)
	}
}

func TestHubModelMissingIsReported(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), spokeModel)
	store, _ := memory.Open(t.TempDir(), memory.Options{})
	defer store.Close()
	hc, _ := llm.New(llm.Config{Host: srv.Host(), Model: "absent"}, nil)
	op, _ := hub.New(hub.Options{Store: store, HubModel: hc, SpokeModel: func(string) (spokes.Model, error) {
		return llm.New(llm.Config{Host: srv.Host(), Model: spokeModel}, nil)
	}})
	defer op.Close()
	chat, _ := op.NewChat(false)
	_, err := op.Ask(context.Background(), chat.ID, "x", nil)
	if m, ok := llm.IsModelMissing(err); !ok || m != "absent" {
		t.Fatalf("want model missing, got %v", err)
	}
	turns, _ := op.Turns(chat.ID)
	if len(turns) != 1 || !turns[0].Retryable() || turns[0].Query != "x" {
		t.Fatalf("the request must stay, retryable: %+v", turns)
	}
}

func TestPrivateChatWritesNothingToDisk(t *testing.T) {
	t.Parallel()
	const secret = "PRIVATE-MARKER-7f3a"
	r := newRig(t, ollamatest.Planned(chatPlan, func(req *api.ChatRequest) ollamatest.Reply {
		if q := req.Messages[len(req.Messages)-1].Content; strings.Contains(q, secret) {
			return ollamatest.Text("reply about " + secret + "-ANSWER")
		}
		return ollamatest.Text("public reply")
	}))
	// A normal chat too, so the data dir is in use.
	pub, _ := r.op.NewChat(false)
	if _, err := r.op.Ask(context.Background(), pub.ID, "public question", nil); err != nil {
		t.Fatal(err)
	}
	priv, err := r.op.NewChat(true)
	if err != nil || !priv.Private {
		t.Fatalf("private chat: %+v %v", priv, err)
	}
	for i := 0; i < 3; i++ {
		if _, err := r.op.Ask(context.Background(), priv.ID, "my "+secret+" question", nil); err != nil {
			t.Fatal(err)
		}
	}
	turns, _ := r.op.Turns(priv.ID)
	if len(turns) != 3 {
		t.Fatalf("private chat must work in memory: %d turns", len(turns))
	}
	chats, _ := r.op.Chats()
	if len(chats) != 2 || !chats[0].Private {
		t.Fatalf("chats %+v", chats)
	}
	// Flush everything badger holds, then scan every byte on disk.
	r.op.Close()
	r.store.Close()
	publicSeen := false
	err = filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(priv.ID)) {
			t.Errorf("%s holds private chat data (secret %v, id %v)", path, bytes.Contains(b, []byte(secret)), bytes.Contains(b, []byte(priv.ID)))
		}
		if bytes.Contains(b, []byte("public question")) {
			publicSeen = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !publicSeen {
		t.Fatal("the scan found not even the public chat's text: it proves nothing")
	}
}

// A chat whose first request was private is titled without its words.
func TestPrivateFirstQueryKeepsNoTitle(t *testing.T) {
	t.Parallel()
	r := newRig(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("ok") }))
	chat, _ := r.op.NewChat(false)
	if _, err := r.op.AskWith(context.Background(), chat.ID, "my SECRET-TITLE question", hub.AskOptions{Private: true}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := r.op.Chat(chat.ID)
	if c.Title != "private query" {
		t.Fatalf("title %q", c.Title)
	}
	if _, err := r.op.Ask(context.Background(), chat.ID, "a public one", nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := r.op.Chat(chat.ID); c.Title != "private query" {
		t.Fatalf("a title, once set, stays: %q", c.Title)
	}
}

// A private query's planning is logged without a word of it: a planner
// that quotes the request in unusable output leaves no trace of it in the
// log.
func TestPrivateQueryIsNotLogged(t *testing.T) {
	t.Parallel()
	const secret = "my PIN is 4321"
	r := newRig(t, func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			// Unusable, and quoting the request in what the error names.
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "PIN-4321", "functionality": "pin.4321", "query": secret, "depends_on": []string{}}}})
		}
		return ollamatest.Text("ok")
	})
	chat, _ := r.op.NewChat(false)
	if _, err := r.op.AskWith(context.Background(), chat.ID, secret, hub.AskOptions{Private: true}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.logs.String(), "4321") {
		t.Fatalf("the log holds the private query:\n%s", r.logs.String())
	}
	if !strings.Contains(r.logs.String(), "no detail logged") {
		t.Fatalf("the fallback should still be logged, without detail:\n%s", r.logs.String())
	}
	// A public query's fallback keeps its detail (else the test proves
	// nothing).
	if _, err := r.op.Ask(context.Background(), chat.ID, secret, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.logs.String(), "4321") {
		t.Fatal("a public fallback logs its reason")
	}
}
