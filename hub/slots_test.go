package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// upkeepScript plans plain chat, answers in a sentence, and does the
// memory upkeep with a summary and no entities.
func upkeepScript(req *api.ChatRequest) ollamatest.Reply {
	switch task := hub.UpkeepTask(req); {
	case strings.HasPrefix(task, hub.SummaryMarker):
		return ollamatest.JSON(map[string]string{"summary": "The user talks about the sea."})
	case strings.HasPrefix(task, hub.ExtractMarker):
		return ollamatest.JSON(map[string]any{"entities": []any{}})
	case hub.IsTriage(req):
		return ollamatest.JSON("chat")
	case len(req.Format) > 0:
		// In two pieces: the kind decides, and the planner's slot is
		// still busy when the draft, released by its first byte, comes.
		plan := `{"kind":"chat","steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`
		return ollamatest.Reply{Chunks: []string{plan[:15], plan[15:]}}
	}
	return ollamatest.Text("The sea keeps the light.")
}

// plannersPrefix is how many tokens of the first planner call's prompt
// are its instructions and the functionality list: what every later
// planner call shares with it.
func plannersPrefix(reqs []api.ChatRequest) int {
	for _, req := range reqs {
		if len(req.Format) > 0 && hub.UpkeepTask(&req) == "" {
			list, _, _ := strings.Cut(req.Messages[1].Content, "\n\n")
			return len(ollamatest.PromptTokens(&api.ChatRequest{Messages: []api.Message{req.Messages[0], {Role: "user", Content: list}}}))
		}
	}
	return 0
}

// On a server with three slots, each caching the prompt it last read,
// the memory upkeep between turns never evicts the planner's prefix (its
// instructions and the functionality list, most of its prompt): every
// planner call after the first finds at least that much cached — in
// either draft order, with the upkeep of the hub and of the spoke after
// every turn.
func TestUpkeepNeverEvictsThePlannersPrefix(t *testing.T) {
	for _, sideBySide := range []bool{false, true} {
		r := hubtest.New(t, hubtest.Config{Script: upkeepScript, Modify: func(o *hub.Options) {
			o.Draft = true
			o.Memory = hub.MemoryOptions{Enabled: true, Every: 1}
		}})
		r.Srv.Slotted(ollamatest.SlotModel{Slots: 3, Decode: 100 * time.Millisecond})
		hub.SetSideBySideForTest(r.Op, sideBySide)
		hub.PlannerReadForTest(r.Op)
		// Every turn's plan is the planner's, whether or not the probes
		// taught the order (a triage would stand for it where they did
		// not); and a probe's draft takes its slot before the planner.
		hub.NoTriageForTest(r.Op)
		hub.SetDraftLeadForTest(r.Op, time.Hour)
		chat, _ := r.Op.NewChat(false)
		for _, q := range []string{"Tell me about the sea", "And the tides?", "Why is it blue?", "Is it cold?", "Thanks"} {
			if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
				t.Fatal(err)
			}
			if err := r.Op.FlushMemory(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		prefix := plannersPrefix(r.Srv.Requests())
		// A spoke's upkeep is framed as that spoke's own prompt: never
		// with the catalog, which would tell an app which others the
		// user has.
		spokeUpkeep := 0
		for _, req := range r.Srv.Requests() {
			if task := hub.UpkeepTask(&req); strings.Contains(task, "your own work") {
				spokeUpkeep++
				for _, m := range req.Messages {
					if strings.Contains(m.Content, "Functionalities:") {
						t.Fatalf("a spoke's upkeep carries the catalog: %q", m.Content)
					}
				}
			}
		}
		if spokeUpkeep == 0 {
			t.Fatal("no spoke's upkeep seen: the test proves nothing of it")
		}
		// (A warm — the planner's prompt read after an upkeep, one token
		// asked — is neither: it finds the prefix as the plan after it.)
		upkeep, plans := 0, 0
		for i, u := range r.Srv.SlotUses() {
			if !u.Plan {
				upkeep++
				continue
			}
			if hub.IsWarm(&u.Request) {
				if u.Cached < prefix {
					t.Errorf("side by side %v: a warm (use %d) found %d tokens cached in slot %d, the planner's prefix is %d: evicted", sideBySide, i, u.Cached, u.Slot, prefix)
				}
				continue
			}
			plans++
			if plans > 1 && u.Cached < prefix {
				t.Errorf("side by side %v: planner call %d (use %d) found %d tokens cached in slot %d, its prefix is %d: evicted", sideBySide, plans, i, u.Cached, u.Slot, prefix)
			}
		}
		if plans != 5 || upkeep < 5*2 || prefix < 50 {
			t.Fatalf("side by side %v: %d planner calls, %d others, prefix %d: the test proves nothing", sideBySide, plans, upkeep, prefix)
		}
	}
}

// The hub's upkeep goes after the apps': its calls begin as the
// planner's prompt does, so the last request before the next turn leaves
// the planner's prefix cached, however many calls the apps' upkeep made
// — through one-app and two-app turns, with the upkeep after every turn,
// on a server as bulkhead starts it (the free slot sharing the longest
// prefix) and on one with OLLAMA_MULTIUSER_CACHE (the slot used longest
// ago, the prefix copied in; bulkhead does not set it, it aborts Ollama
// 0.17.4's llama.cpp-engine runner). Before, the apps' four upkeep calls
// came last and the next plan read its prompt cold. With the upkeep
// batched (every fourth turn, the default), the first server keeps it
// too: every call about the apps begins with the same preamble, and
// the first app turn's seat gave them a slot of their own (seat.go);
// before both, an app turn's spoke took the planner's slot every turn.
func TestAppTurnsKeepThePlannersPrefix(t *testing.T) {
	for _, c := range []struct {
		multiUser bool
		every     int
	}{{false, 1}, {true, 1}, {true, 4}, {false, 4}} {
		hold := newSeatHold()
		r := hubtest.New(t, hubtest.Config{Script: hold.wrap(ollamatest.Gullible()), Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
			Modify: func(o *hub.Options) {
				o.Draft = true
				o.Memory = hub.MemoryOptions{Enabled: true, Every: c.every}
			}})
		r.Srv.Slotted(ollamatest.SlotModel{Slots: 3, MultiUser: c.multiUser})
		hold.watch(r.Op)
		hub.SetDraftLeadForTest(r.Op, time.Hour) // the first turn's probe draft takes its slot first
		chat, _ := r.Op.NewChat(false)
		for _, q := range []string{
			"What is the fare from the airport to downtown on metro_hail?",
			"Compare the fares from the airport to downtown on metro_hail and quick_ride",
			"And from downtown to the airport on quick_ride?",
			"Compare the fares from the station to the harbour on metro_hail and quick_ride",
		} {
			if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
				t.Fatal(err)
			}
			wait := r.Op.WaitMemory
			if c.every == 1 {
				wait = r.Op.FlushMemory
			}
			if err := wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		prefix := plannersPrefix(r.Srv.Requests())
		spokeCalls, appUpkeep := 0, 0
		for _, req := range r.Srv.Requests() {
			if len(req.Tools) > 0 {
				spokeCalls++
			}
			if strings.Contains(hub.UpkeepTask(&req), "your own work") {
				appUpkeep++
			}
		}
		plans, evicted, warms := 0, 0, 0
		for _, u := range r.Srv.SlotUses() {
			if !u.Plan {
				continue
			}
			if hub.IsWarm(&u.Request) {
				warms++ // the planner's prompt read after an upkeep (warm.go)
				continue
			}
			if plans++; plans > 1 && u.Cached < prefix {
				evicted++
				t.Errorf("%+v: planner call %d found %d tokens cached in slot %d, its prefix is %d: evicted", c, plans, u.Cached, u.Slot, prefix)
			}
		}
		others := len(r.Srv.SlotUses()) - plans - warms
		t.Logf("%+v: %d planner calls, %d others (%d of the apps' spokes, %d of their upkeep), %d evicted", c, plans, others, spokeCalls, appUpkeep, evicted)
		if plans != 4 || prefix < 50 || spokeCalls < 1 || others < plans || (c.every == 1 && appUpkeep < 4) {
			t.Fatalf("%+v: the test proves nothing", c)
		}
	}
}

// The planner's prompt of a turn continues the last turn's — the
// earlier requests listed the way the last one was asked, what served it
// appended — so a model server reads only the new request from its
// prompt cache. Past the history window the requests shown move in
// blocks of half the window, not at every turn: with a window of six, a
// chat of fifteen turns breaks the continuation three times, each where
// the first request shown changed, and every turn shows four to six
// earlier requests, the most recent, in order. Requests of several
// forms (quotes, a line break, other scripts, a copy of the prompt's own
// words) do not break it. Before, the current request was written
// otherwise than an earlier one and the window moved at every turn: each
// plan read the last two requests again, and past the window all of them.
func TestThePlannersPromptContinuesTheLastTurns(t *testing.T) {
	const window = 6
	r := hubtest.New(t, hubtest.Config{Script: upkeepScript, Modify: func(o *hub.Options) {
		o.History = window
		o.Draft = true
	}})
	hub.NoTriageForTest(r.Op) // every turn's plan is the planner's
	queries := []string{
		"Tell me about the sea", `What does "brine" mean?`, "And the tides?\nWhy twice a day?", "Pourquoi la mer est-elle salée ?",
		"Request: is this a request?", "海はなぜ青い", "Is it cold?", "Served by: nothing. How deep is it?", "Thanks", "One more: waves",
		"What is a rogue wave", "ok", "And tsunamis?", "Which sea is the saltiest", "Bye",
	}
	chat, _ := r.Op.NewChat(false)
	for _, q := range queries {
		if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	var prompts []string
	for _, req := range r.Srv.Requests() {
		if len(req.Format) > 0 && hub.UpkeepTask(&req) == "" && len(req.Messages) == 2 {
			prompts = append(prompts, req.Messages[1].Content)
		}
	}
	if len(prompts) != len(queries) {
		t.Fatalf("%d planner prompts for %d turns", len(prompts), len(queries))
	}
	firstShown := func(turn int) int { // index of the first earlier request shown, turn's own if none
		for i := range turn {
			if strings.Contains(prompts[turn], "Request: "+queries[i]+"\nServed by: ") {
				return i
			}
		}
		return turn
	}
	breaks := 0
	for turn := range prompts {
		p := prompts[turn]
		if !strings.HasSuffix(p, "Request: "+queries[turn]+"\n") {
			t.Fatalf("turn %d: the prompt does not end with its request:\n%s", turn+1, p)
		}
		first := firstShown(turn)
		shown := turn - first
		if shown > window || (turn > window && shown < window/2+1) || (turn <= window && shown != turn) {
			t.Errorf("turn %d shows %d earlier requests (window %d)", turn+1, shown, window)
		}
		for i := first; i < turn; i++ {
			if !strings.Contains(p, "Request: "+queries[i]+"\nServed by: "+hub.VanillaApp+"\n") {
				t.Errorf("turn %d: earlier request %d (%q) not listed with what served it", turn+1, i+1, queries[i])
			}
		}
		if turn == 0 {
			continue
		}
		if !strings.HasPrefix(p, prompts[turn-1]) {
			breaks++
			if first == firstShown(turn-1) {
				t.Errorf("turn %d's prompt does not continue turn %d's, yet the same requests begin it:\n%s\n---\n%s", turn+1, turn, prompts[turn-1], p)
			}
		}
	}
	if breaks != 3 {
		t.Errorf("the prompt's continuation broke %d times in %d turns with a window of %d, want 3", breaks, len(queries), window)
	}
}

// The planner's window of earlier requests moves in blocks, and so does
// the plain spoke's of earlier exchanges; where the next turn's moves,
// its prompt does not continue the last one's, and the server would read
// the requests, or the conversation, again on the next turn's path. And
// the server does not hold the last answer as the next prompt writes it
// (here, as with the tests' dubbed model, it holds none of it). So those
// prompts are read while the person is idle (background calls): on a
// server with three slots, through eleven chat turns with windows of
// eight requests and four exchanges, every plan after the first finds
// all its prompt cached but what served the last request and its own, and
// every answer after the first all but its own request — the turns after
// a window moved too. Before, those read their earlier requests, or the
// last exchange (or all the exchanges), again.
func TestThePlannersWindowIsReadBeforeItMoves(t *testing.T) {
	var from int
	var srv *ollamatest.Scripted
	r := hubtest.New(t, hubtest.Config{
		Modify: func(o *hub.Options) {
			o.Draft = true
			o.History = 8
			o.SpokeHistory = 4
			o.Memory = hub.MemoryOptions{Enabled: true, Every: 1000} // no upkeep comes due
		},
		Script: func(req *api.ChatRequest) ollamatest.Reply { return sideBySide(srv, &from, nil, upkeepScript)(req) }})
	srv = r.Srv
	r.Srv.Slotted(ollamatest.SlotModel{Slots: 3})
	hub.SetSideBySideForTest(r.Op, true)
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	hub.NoTriageForTest(r.Op) // every turn's plan is the planner's
	chat, _ := r.Op.NewChat(false)
	var background []int
	for i := range 11 {
		from = len(r.Srv.SlotUses())
		turn, err := r.Op.Ask(context.Background(), chat.ID, fmt.Sprintf("Tell me one more thing about the sea, number %d", i+1), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Op.WaitMemory(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.Srv.WaitSlotsFree() // a plan cut at its kind is let go a moment later
		background = append(background, turn.Usage.BackgroundCalls)
	}
	plans, reads := 0, 0
	for _, u := range r.Srv.SlotUses() {
		req := u.Request
		if !u.Plan {
			continue
		}
		if hub.IsWarm(&req) {
			reads++
			continue
		}
		if plans++; plans == 1 {
			continue
		}
		// All but its own request: what served the last one (appended
		// after it) was read ahead.
		content := req.Messages[1].Content
		head := content[:strings.LastIndex(content, hub.RequestLabelForTest)+len(hub.RequestLabelForTest)]
		want := len(ollamatest.PromptTokens(&api.ChatRequest{Messages: []api.Message{req.Messages[0], {Role: "user", Content: head}}}))
		if u.Cached < want {
			t.Errorf("plan %d found %d tokens cached, %d of its prompt come before its request (background calls per turn %v)", plans, u.Cached, want, background)
		}
	}
	answers := 0
	for _, u := range r.Srv.SlotUses() {
		req := u.Request
		if len(req.Format) > 0 || req.Messages[0].Content != hub.VanillaSystemForTest || hub.IsWarm(&req) {
			continue
		}
		if answers++; answers == 1 {
			continue
		}
		// All but its own request: the last exchange was read ahead.
		last := len(req.Messages) - 1
		if last < 2 || req.Messages[last-1].Role != "assistant" {
			t.Fatalf("answer %d: no earlier exchange in its prompt", answers)
		}
		want := len(ollamatest.PromptTokens(&api.ChatRequest{Messages: req.Messages[:last]}))
		if u.Cached < want {
			t.Errorf("answer %d found %d tokens cached, %d of its prompt come before its request (background calls per turn %v)", answers, u.Cached, want, background)
		}
	}
	// The conversation's prompt and the planner's are read after every
	// turn (the last exchange, the last request with what served it, are
	// new to them), the turns where a window moves too.
	if want := []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}; plans != 11 || answers != 11 || reads != 11 || !slices.Equal(background, want) {
		t.Errorf("%d plans, %d answers, %d reads of the planner's prompt ahead, background calls per turn %v: want 11, 11, 11, %v", plans, answers, reads, background, want)
	}
}

// Where a turn brings the plain spoke's upkeep due, the upkeep ends by
// having the conversation's prompt read (its summary comes before the
// exchanges): the turn's own read ahead of that prompt is not queued
// beside it — one read per turn, not two — and the next answer still
// finds all but its request cached.
func TestAnUpkeepsReadIsTheTurnsReadAhead(t *testing.T) {
	var from int
	var srv *ollamatest.Scripted
	r := hubtest.New(t, hubtest.Config{
		Modify: func(o *hub.Options) {
			o.Draft = true
			o.Memory = hub.MemoryOptions{Enabled: true, Every: 2}
		},
		Script: func(req *api.ChatRequest) ollamatest.Reply { return sideBySide(srv, &from, nil, upkeepScript)(req) }})
	srv = r.Srv
	r.Srv.Slotted(ollamatest.SlotModel{Slots: 3})
	hub.SetSideBySideForTest(r.Op, true)
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	hub.NoTriageForTest(r.Op)
	chat, _ := r.Op.NewChat(false)
	var reads []int
	for i := range 5 {
		from = len(r.Srv.SlotUses())
		if _, err := r.Op.Ask(context.Background(), chat.ID, fmt.Sprintf("Tell me about the sea, part %d", i+1), nil); err != nil {
			t.Fatal(err)
		}
		if err := r.Op.WaitMemory(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.Srv.WaitSlotsFree()
		n := 0
		for _, u := range r.Srv.SlotUses()[from:] {
			if req := u.Request; hub.IsWarm(&req) && len(req.Format) == 0 && req.Messages[0].Content == hub.VanillaSystemForTest {
				n++
			}
		}
		reads = append(reads, n)
	}
	// The plain spoke's upkeep comes due at turns 2 and 4.
	if want := []int{1, 1, 1, 1, 1}; !slices.Equal(reads, want) {
		t.Errorf("reads of the conversation's prompt after each turn %v, want %v", reads, want)
	}
	answers := 0
	for _, u := range r.Srv.SlotUses() {
		req := u.Request
		if len(req.Format) > 0 || req.Messages[0].Content != hub.VanillaSystemForTest || hub.IsWarm(&req) || hub.UpkeepTask(&req) != "" {
			continue
		}
		if answers++; answers == 1 {
			continue
		}
		want := len(ollamatest.PromptTokens(&api.ChatRequest{Messages: req.Messages[:len(req.Messages)-1]}))
		if u.Cached < want {
			t.Errorf("answer %d found %d tokens cached, %d of its prompt come before its request", answers, u.Cached, want)
		}
	}
	if answers != 5 {
		t.Fatalf("%d answers in five turns", answers)
	}
}
