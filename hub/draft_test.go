package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

const draftAnswer = "Here is a nice thing: the sea keeps the light."

// slowPlanner plans slowly — chat for "nice", a story otherwise — and
// answers a plain request at once, word by word: a draft has time to
// stream before the plan is known.
func slowPlanner(t *testing.T) ollamatest.Script {
	gullible := ollamatest.Gullible()
	return func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case len(req.Format) > 0 && strings.Contains(string(req.Format), `"steps"`):
			fn := "writing.story"
			if strings.Contains(req.Messages[len(req.Messages)-1].Content, "nice") {
				fn = "chat"
			}
			r := ollamatest.JSON(map[string]any{"steps": []any{map[string]any{"id": "s1", "functionality": fn, "query": "q", "depends_on": []string{}}}})
			r.Delay = 300 * time.Millisecond
			return r
		case len(req.Tools) > 0 || len(req.Format) > 0:
			return gullible(req)
		}
		return ollamatest.Text(draftAnswer)
	}
}

// draftRig is a hub that drafts, and has learned that the server runs
// two requests at once: the draft goes first and streams while the slow
// planner plans (the order itself: TestTheDraftGoesFirstOnlyWhere…).
// The planner's request follows the draft's first piece, however long
// that takes (no lead limit): the draft's first words come before the
// plan by the script, not by the scheduler.
func draftRig(t *testing.T) *hubtest.Rig {
	r := hubtest.New(t, hubtest.Config{Script: slowPlanner(t), Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
		Modify: func(o *hub.Options) { o.Draft = true }})
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	return r
}

// A plain chat turn streams its answer while the plan is being made: the
// draft's pieces come before the plan, and the kept draft is the answer — logged in the vanilla
// spoke's memory as a chat step's would be (the next turn reads it), at
// the cost of the planner's call and the answer's, no more.
func TestAPlainChatTurnIsDraftedWhileThePlanIsMade(t *testing.T) {
	r := draftRig(t)
	chat, _ := r.Op.NewChat(false)
	var kinds []hub.EventKind
	var streamed strings.Builder
	var calls int
	turn, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice", func(e hub.Event) {
		kinds = append(kinds, e.Kind)
		if e.Kind == hub.EventDraft || e.Kind == hub.EventToken {
			streamed.WriteString(e.Text)
		}
		if e.Kind == hub.EventAnswer {
			calls = e.Usage.Calls
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	firstDraft, plan := index(kinds, hub.EventDraft), index(kinds, hub.EventPlan)
	if firstDraft < 0 || plan < 0 || firstDraft > plan {
		t.Fatalf("the draft should stream before the plan is known: %v", kinds)
	}
	if i := index(kinds, hub.EventToken); i >= 0 && i < plan {
		t.Fatalf("no answer token before the plan: %v", kinds)
	}
	if index(kinds, hub.EventDraftWithdrawn) >= 0 {
		t.Fatalf("a plain chat plan keeps its draft: %v", kinds)
	}
	if turn.Answer != draftAnswer || streamed.String() != draftAnswer {
		t.Fatalf("the answer is the draft: %q (streamed %q)", turn.Answer, streamed.String())
	}
	if calls != 2 {
		t.Fatalf("a drafted chat turn costs the plan and the answer: %d calls", calls)
	}
	// The next turn's plain answer has the kept draft in its history.
	if _, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice again", nil); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, req := range r.Srv.Requests() {
		if len(req.Format) == 0 && len(req.Tools) == 0 {
			for _, m := range req.Messages {
				found = found || (m.Role == "assistant" && m.Content == draftAnswer)
			}
		}
	}
	if !found {
		t.Fatal("the kept draft must be in the vanilla spoke's memory, as a chat step's answer")
	}
}

// When the plan uses an app, the draft is withdrawn: the clients are told,
// the answer is the app's, and the draft leaves no trace — not in the
// vanilla spoke's memory, not in the turn as logged.
func TestADraftIsWithdrawnWhenThePlanUsesAnApp(t *testing.T) {
	r := draftRig(t)
	chat, _ := r.Op.NewChat(false)
	var kinds []hub.EventKind
	turn, err := r.Op.Ask(context.Background(), chat.ID, "Write a story about a dragon", func(e hub.Event) { kinds = append(kinds, e.Kind) })
	if err != nil {
		t.Fatal(err)
	}
	w, plan := index(kinds, hub.EventDraftWithdrawn), index(kinds, hub.EventPlan)
	if index(kinds, hub.EventDraft) < 0 || w < 0 || w > plan {
		t.Fatalf("the draft streamed, then is withdrawn before the plan: %v", kinds)
	}
	if strings.Contains(turn.Answer, "sea keeps the light") {
		t.Fatalf("the withdrawn draft is in the answer: %q", turn.Answer)
	}
	ns, err := r.Store.Namespace("spoke/" + hub.VanillaApp)
	if err != nil {
		t.Fatal(err)
	}
	if its, err := ns.Recent(chat.ID, 10); err != nil || len(its) != 0 {
		t.Fatalf("a withdrawn draft leaves nothing in the vanilla spoke's memory: %v %v", its, err)
	}
	turns, _, err := r.Op.TurnsBefore(chat.ID, 0, 10)
	if err != nil || len(turns) != 1 || strings.Contains(turns[0].Answer, "sea keeps") {
		t.Fatalf("the logged turn holds no word of the draft: %+v %v", turns, err)
	}

	// A request that names an app is not drafted at all.
	kinds = nil
	if _, err := r.Op.Ask(context.Background(), chat.ID, "Ask creative_muse for a story about a dragon", func(e hub.Event) { kinds = append(kinds, e.Kind) }); err != nil {
		t.Fatal(err)
	}
	if index(kinds, hub.EventDraft) >= 0 {
		t.Fatalf("a request naming an app is drafted: %v", kinds)
	}
}

// A private chat's kept draft, like its answer, never reaches the disk;
// nor does a private query's in a chat that is kept.
func TestAPrivateDraftLeavesNothing(t *testing.T) {
	for _, privateChat := range []bool{true, false} {
		t.Run(map[bool]string{true: "private chat", false: "private query"}[privateChat], func(t *testing.T) {
			testPrivateDraft(t, privateChat)
		})
	}
}

func testPrivateDraft(t *testing.T, privateChat bool) {
	r := draftRig(t)
	chat, _ := r.Op.NewChat(privateChat)
	const secret = "Tell me something nice about my diagnosis zebra-42"
	if _, err := r.Op.AskWith(context.Background(), chat.ID, secret, hub.AskOptions{Private: !privateChat}, nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	err := filepath.Walk(r.Dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("zebra-42")) || bytes.Contains(b, []byte("sea keeps the light")) {
			t.Errorf("%s holds the private turn's words", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func index(kinds []hub.EventKind, k hub.EventKind) int {
	for i, x := range kinds {
		if x == k {
			return i
		}
	}
	return -1
}

// paced plans with its JSON in three slow pieces and drafts word by word,
// slowly too: a server with parallel slots streams both at once. With a
// gate (planBegun), the draft's pieces after its first wait for it.
func paced(gate *ollamatest.Gate) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			b := `{"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`
			return ollamatest.Reply{Chunks: []string{b[:10], b[10:40], b[40:]}, Delay: 80 * time.Millisecond}
		}
		// Long enough that a planner held behind it is plain to see.
		r := ollamatest.Text(draftAnswer + " " + draftAnswer)
		r.Delay = 40 * time.Millisecond
		return afterPlanBegun(r, gate)
	}
}

// serialize makes the scripted server answer one request at a time, as
// Ollama with one slot does.
func serialize(srv *ollamatest.Scripted) {
	var mu sync.Mutex
	h := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// serializeDraftFirst is serialize where the test says which of a
// turn's two streams the server takes first: a planner's request waits
// at draftFirst before it queues, and a plain answer's request opens the
// gate once it holds the server. On a turn whose draft goes ahead (the
// gate shut) the server so takes the draft first, as a server takes the
// request that came first, whichever of the two its scheduler ran
// first; on a turn whose planner goes first the test opens the gate.
func serializeDraftFirst(srv *ollamatest.Scripted, draftFirst *ollamatest.Gate) {
	var mu sync.Mutex
	srv.OnChat(func(w http.ResponseWriter, r *http.Request, body []byte, h http.Handler) {
		var req api.ChatRequest
		_ = json.Unmarshal(body, &req)
		if ollamatest.IsPlanner(&req) && !draftFirst.Wait(r.Context()) && r.Context().Err() != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if len(req.Format) == 0 {
			draftFirst.Open()
		}
		h.ServeHTTP(w, r)
	})
}

// watched makes the hub's model clients (the planner's and every
// spoke's, on host: "" is the rig's own server) tell began of each chat
// request once the hub has the first byte of its answer
// (ollamatest.Began).
func watched(o *hub.Options, host string, began func(req *api.ChatRequest)) {
	if host == "" {
		host = o.HubModel.(interface{ Host() string }).Host()
	}
	hc := &http.Client{Transport: ollamatest.Began(nil, began)}
	o.HubModel, _ = llm.New(llm.Config{Host: host, Model: hubtest.Model}, hc)
	o.SpokeModel = func(string) (spokes.Model, error) {
		return llm.New(llm.Config{Host: host, Model: hubtest.Model}, hc)
	}
}

// planBegun opens gate once the hub has the first byte of a planner's
// answer: a stream held for it is read after the hub has seen the plan
// begin — not only written after it (two connections are read by two
// goroutines, in either order).
func planBegun(o *hub.Options, host string, gate *ollamatest.Gate) {
	watched(o, host, func(req *api.ChatRequest) {
		if ollamatest.IsPlanner(req) {
			gate.Open()
		}
	})
}

// afterPlanBegun holds every piece of r but its first until gate opens
// (nil: none is held). A draft so writes its first words freely (a
// planner may wait for them: the lead) and the rest only once the hub
// has the planner's first byte: it is still drafting when the plan
// begins, however the two are scheduled.
func afterPlanBegun(r ollamatest.Reply, gate *ollamatest.Gate) ollamatest.Reply {
	if gate != nil {
		r.Before = func(i int) {
			if i >= 1 {
				gate.Wait(context.Background())
			}
		}
	}
	return r
}

func firstIsDraft(reqs []api.ChatRequest) bool { return len(reqs) > 0 && len(reqs[0].Format) == 0 }

// The order of the two requests is learned: while it is not known the
// first drafts go ahead as probes, and one whose piece comes while the
// plan streams teaches that the server runs both at once — the draft
// first from then on. A server that runs one request at a time teaches
// nothing so: after DraftProbes turns the planner goes first; a learned
// order it does not keep is unlearned after one turn.
//
// Which stream goes first is the script's, never the scheduler's: the
// planner's request follows the draft's first piece however long that
// takes (no lead limit); where the server runs both at once the draft's
// later pieces wait until the hub has the planner's first byte
// (planBegun); where it runs one at a time, on a turn whose draft goes
// ahead the server takes the draft before the planner, even the probe
// whose planner follows the draft's request by a few milliseconds only
// (serializeDraftFirst).
func TestTheDraftGoesFirstOnlyWhereTheServerRunsBothAtOnce(t *testing.T) {
	begun, draftFirst := ollamatest.NewGate(), ollamatest.NewGate()
	ask := func(r *hubtest.Rig, chat string, draftAhead bool) []api.ChatRequest {
		t.Helper()
		begun.Shut()
		if draftAhead {
			draftFirst.Shut()
		} else {
			draftFirst.Open()
		}
		before := len(r.Srv.Requests())
		if _, err := r.Op.Ask(context.Background(), chat, "Tell me something nice", nil); err != nil {
			t.Fatal(err)
		}
		if begun.TimedOut() || draftFirst.TimedOut() {
			t.Fatal("a gate of the test ran out: the hub did not send what it should have")
		}
		return r.Srv.Requests()[before:]
	}
	rig := func(serial bool) (*hubtest.Rig, string) {
		gate := begun
		if serial {
			gate = nil // the planner begins only once the draft has ended
		}
		r := hubtest.New(t, hubtest.Config{Script: paced(gate), Modify: func(o *hub.Options) {
			o.Draft = true
			if !serial {
				planBegun(o, "", begun)
			}
		}})
		hub.SetDraftLeadForTest(r.Op, time.Hour)
		if serial {
			serializeDraftFirst(r.Srv, draftFirst)
		}
		chat, _ := r.Op.NewChat(false)
		return r, chat.ID
	}

	r, chat := rig(false)
	if !firstIsDraft(ask(r, chat, true)) {
		t.Fatal("before anything is learned the draft goes ahead as a probe")
	}
	if !hub.SideBySideForTest(r.Op) {
		t.Fatal("a draft piece came while the plan streamed: the server runs both at once")
	}
	if !firstIsDraft(ask(r, chat, true)) {
		t.Fatal("then the draft goes first")
	}

	r, chat = rig(true)
	for turn := 1; turn <= hub.DraftProbes+2; turn++ {
		probe := turn <= hub.DraftProbes
		if firstIsDraft(ask(r, chat, probe)) != probe || hub.SideBySideForTest(r.Op) {
			t.Fatalf("one request at a time, turn %d: the draft goes ahead only as one of the %d probes, and teaches nothing", turn, hub.DraftProbes)
		}
	}
	hub.SetSideBySideForTest(r.Op, true) // learned from a server since restarted with one slot
	hub.PlannerReadForTest(r.Op)
	if !firstIsDraft(ask(r, chat, true)) {
		t.Fatal("the learned order sends the draft first")
	}
	if hub.SideBySideForTest(r.Op) {
		t.Fatal("the planner waited for the whole draft: the order is unlearned")
	}
	if firstIsDraft(ask(r, chat, false)) {
		t.Fatal("and the planner goes first again")
	}
}

// A plan of plain chat is a few tokens: a server whose order is not known
// has ended the planner's stream before a draft released by the plan's
// first tokens writes, and a hold of the plan teaches nothing. The probe
// does not depend on the plan's length: the first turn teaches the order.
//
// (The draft's first piece comes, then the planner's request; the rest
// of the draft waits until the hub has the plan's first byte: a server
// that runs both at once, however its streams are scheduled.)
func TestAShortPlanStillTeachesTheOrder(t *testing.T) {
	plan := `{"kind":"chat","steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`
	begun := ollamatest.NewGate()
	r := hubtest.New(t, hubtest.Config{Modify: func(o *hub.Options) {
		o.Draft = true
		planBegun(o, "", begun)
	},
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			if len(req.Format) > 0 {
				return ollamatest.Reply{Chunks: []string{plan}} // at once, whole
			}
			return afterPlanBegun(ollamatest.Text(draftAnswer+" "+draftAnswer), begun)
		}})
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	chat, _ := r.Op.NewChat(false)
	if _, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice", nil); err != nil {
		t.Fatal(err)
	}
	if !hub.SideBySideForTest(r.Op) {
		t.Fatal("the first chat turn must teach that the server runs both at once")
	}
}

// A draft is withdrawn as soon as the planner's streamed output names an
// app's functionality — before the plan is complete, before the draft
// has cost a whole answer: the server sees the draft's request given up
// while the planner's answer still streams. And a planner that names one,
// then falls back to plain chat, gets its chat step answered afresh.
//
// (The plan's first piece, which names the app, follows the draft's
// first; its rest waits until the server has ended the draft's stream:
// only a draft given up at the first piece lets the plan end.)
func TestADraftIsWithdrawnAsSoonAsThePlanNamesAnApp(t *testing.T) {
	plan := `{"steps":[{"id":"s1","functionality":"writing.story","query":"q","depends_on":[]}]}`
	cut := strings.Index(plan, `"query"`)
	gullible := ollamatest.Gullible()
	draftGone := ollamatest.NewGate()
	var plain atomic.Int32
	r := hubtest.New(t, hubtest.Config{Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
		Modify: func(o *hub.Options) { o.Draft = true },
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			switch {
			case len(req.Format) > 0 && strings.Contains(string(req.Format), `"steps"`):
				if strings.Contains(req.Messages[1].Content, "garbled") {
					// Names an app, then is unusable; and so is the retry.
					return ollamatest.Reply{Chunks: []string{plan[:cut], "}"}, Delay: 50 * time.Millisecond}
				}
				return ollamatest.Reply{Chunks: []string{plan[:cut], plan[cut:]}, Before: func(i int) {
					if i == 1 {
						draftGone.Wait(context.Background())
					}
				}}
			case len(req.Tools) > 0 || len(req.Format) > 0:
				return gullible(req)
			case isSeat(req):
				return ollamatest.Text("ok")
			}
			// The first plain answer (the draft) streams a little, then
			// goes on until its client gives it up.
			rep := ollamatest.Text("a long plain answer that goes on and on")
			rep.Hang = plain.Add(1) == 1
			return rep
		}})
	// The order in which the server finished its requests.
	var mu sync.Mutex
	var finished []string
	r.Srv.OnChat(func(w http.ResponseWriter, req *http.Request, body []byte, h http.Handler) {
		h.ServeHTTP(w, req)
		kind := "draft"
		var cr api.ChatRequest
		_ = json.Unmarshal(body, &cr)
		switch {
		case bytes.Contains(body, []byte(`"steps"`)):
			kind = "plan"
		case isSeat(&cr):
			return // the seat (seat.go): no answer of the turn's
		}
		mu.Lock()
		finished = append(finished, kind)
		mu.Unlock()
		if kind == "draft" {
			draftGone.Open()
		}
	})
	hub.SetSideBySideForTest(r.Op, true) // the draft goes first, and streams
	hub.PlannerReadForTest(r.Op)
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	chat, _ := r.Op.NewChat(false)
	var kinds []hub.EventKind
	turn, err := r.Op.Ask(context.Background(), chat.ID, "Write a story about a dragon", func(e hub.Event) { kinds = append(kinds, e.Kind) })
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	order := slices.Clone(finished)
	mu.Unlock()
	if len(order) < 2 || order[0] != "draft" || order[1] != "plan" {
		t.Fatalf("the draft must be given up while the plan still streams: the server finished %v", order)
	}
	if w, p := index(kinds, hub.EventDraftWithdrawn), index(kinds, hub.EventPlan); w < 0 || w > p {
		t.Fatalf("withdrawn, then the plan: %v", kinds)
	}
	if strings.Contains(turn.Answer, "goes on and on") {
		t.Fatalf("the withdrawn draft is in the answer: %q", turn.Answer)
	}

	// Garbled twice: the plan falls back to plain chat, answered afresh.
	turn, err = r.Op.Ask(context.Background(), chat.ID, "garbled: tell me something", nil)
	if err != nil || turn.Plan == nil || !turn.Plan.Fallback || !strings.Contains(turn.Answer, "goes on and on") {
		t.Fatalf("a fallback after a withdrawn draft is answered by the chat step: %+v %v", turn, err)
	}
}

// A draft reads nothing an app wrote, in this turn or an earlier one: after
// a turn whose app read an injected email (its answer kept in the chat),
// the plain turn's draft — and its planner — see none of the email, in
// whichever words it came (the attacker's address, its instruction).
func TestADraftReadsNothingAnAppWrote(t *testing.T) {
	r := hubtest.New(t, hubtest.Config{Script: ollamatest.Gullible(), Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
		Modify: func(o *hub.Options) { o.Draft = true }})
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	hub.SetDraftLeadForTest(r.Op, time.Hour) // the draft's first piece comes before the plan
	chat, _ := r.Op.NewChat(false)
	if _, err := r.Op.Ask(context.Background(), chat.ID, "Summarize the emails in my inbox", nil); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, req := range r.Srv.Requests() {
		b, _ := json.Marshal(req.Messages)
		seen = seen || bytes.Contains(b, []byte(demo.AttackerAddress))
	}
	if !seen {
		t.Fatal("the first turn's app should have read the injected email (else this test shows nothing)")
	}
	// (The instant scripted server ran turn 1's draft to its end before
	// the planner answered: the order was unlearned. Drafts go first,
	// the app turn's run ended.)
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	hub.EndAppsRunForTest(r.Op)
	before := len(r.Srv.Requests())
	var drafted bool
	if _, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice", func(e hub.Event) { drafted = drafted || e.Kind == hub.EventDraft }); err != nil {
		t.Fatal(err)
	}
	if !drafted {
		t.Fatal("the plain turn should be drafted")
	}
	for _, req := range r.Srv.Requests()[before:] {
		if len(req.Tools) > 0 {
			continue // an app's spoke: not the draft's, not the planner's
		}
		b, _ := json.Marshal(req.Messages)
		for _, w := range []string{demo.AttackerAddress, "automated security request", demo.ConfidentialDoc, "it-support@"} {
			if bytes.Contains(b, []byte(w)) {
				t.Errorf("a plain or planning request of the plain turn read %q, which an app wrote", w)
			}
		}
	}
}

// A turn cancelled (esc) while its draft is shown keeps what the draft
// wrote, as its partial answer: the clients are not told to withdraw it,
// and the stored turn holds it, marked cancelled.
func TestACancelledDraftStays(t *testing.T) {
	t.Parallel()
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.Reply{Hang: true} // the planner never answers
		}
		return ollamatest.Reply{Chunks: []string{"the first ", "words"}, Hang: true}
	}
	r := hubtest.New(t, hubtest.Config{Script: script, Modify: func(o *hub.Options) { o.Draft = true }})
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	chat, _ := r.Op.NewChat(false)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var evs []hub.Event
	var text strings.Builder
	turn, err := r.Op.Ask(ctx, chat.ID, "say something", func(e hub.Event) {
		mu.Lock()
		defer mu.Unlock()
		evs = append(evs, e)
		if e.Kind == hub.EventDraft {
			text.WriteString(e.Text)
			if text.String() == "the first words" {
				cancel()
			}
		}
	})
	if err == nil {
		t.Fatal("a cancelled turn ended without an error")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range evs {
		if e.Kind == hub.EventDraftWithdrawn {
			t.Fatal("the draft was withdrawn from the clients")
		}
	}
	turns, _ := r.Op.Turns(chat.ID)
	if len(turns) != 1 || turns[0].Answer != "the first words" || turns[0].Status != "cancelled" || turn.Answer != "the first words" {
		t.Fatalf("the cancelled turn: %+v (returned %+v)", turns, turn)
	}
}

// Every second probe's planner follows the draft's request, not its first
// piece: on a server that runs both at once a short answer (a fast
// model's) is written whole before a planner sent after its first piece
// has crossed the server, and the probes taught nothing. Here the server
// reads the two prompts together — it writes nothing of the draft until
// the planner's answer has begun — and the planner would wait for the
// draft's first piece for an hour: the second probe is answered and
// teaches the order without that wait. The same on a server that runs one
// request at a time, which takes the planner first, teaches nothing.
func TestAProbesPlannerFollowsTheDraftsRequest(t *testing.T) {
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.Reply{Chunks: []string{`{"kind":`, `"chat",`}, Hang: true}
		}
		// A short answer, in pieces a little apart (as a model writes).
		reply := ollamatest.Text(draftAnswer)
		reply.Delay = 20 * time.Millisecond
		return reply
	}
	begun := ollamatest.NewGate()
	r := hubtest.New(t, hubtest.Config{Script: script, Modify: func(o *hub.Options) {
		o.Draft = true
		planBegun(o, "", begun)
	}})
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	hub.SetProbesForTest(r.Op, 1)
	// The plan's first piece, then the draft — once the hub has the
	// plan's first byte — then the plan's next: the two are written, and
	// read, side by side.
	draftDone := make(chan struct{})
	onChat(r.Srv, func(w http.ResponseWriter, req *http.Request, plan bool, h http.Handler) {
		if plan {
			h.ServeHTTP(&firstWrite{ResponseWriter: w, next: draftDone}, req)
			return
		}
		if !begun.Wait(req.Context()) && !begun.TimedOut() {
			return
		}
		h.ServeHTTP(w, req)
		close(draftDone)
	})
	chat, _ := r.Op.NewChat(false)
	turn, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice", nil)
	if err != nil || turn.Answer != draftAnswer {
		t.Fatalf("%q %v", turn.Answer, err)
	}
	if begun.TimedOut() {
		t.Fatal("the probe's planner waited for the draft's first piece")
	}
	if !hub.SideBySideForTest(r.Op) || hub.ProbesForTest(r.Op) != 2 {
		t.Fatalf("a probe on a server that reads both prompts together teaches the order: side by side %v, probes %d", hub.SideBySideForTest(r.Op), hub.ProbesForTest(r.Op))
	}

	// One request at a time, the planner taken first (its call is ended
	// by its first tokens, then the draft is served): no lesson.
	r2 := hubtest.New(t, hubtest.Config{Script: script, Modify: func(o *hub.Options) { o.Draft = true }})
	hub.SetDraftLeadForTest(r2.Op, time.Hour)
	hub.SetProbesForTest(r2.Op, 1)
	var mu sync.Mutex
	planFirst := make(chan struct{})
	var once2 sync.Once
	onChat(r2.Srv, func(w http.ResponseWriter, req *http.Request, plan bool, h http.Handler) {
		if plan {
			mu.Lock()
			once2.Do(func() { close(planFirst) })
			defer mu.Unlock()
			h.ServeHTTP(w, req)
			return
		}
		if !await(req, planFirst, nil) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		h.ServeHTTP(w, req)
	})
	chat2, _ := r2.Op.NewChat(false)
	if turn, err := r2.Op.Ask(context.Background(), chat2.ID, "Tell me something nice", nil); err != nil || turn.Answer != draftAnswer {
		t.Fatalf("%q %v", turn.Answer, err)
	}
	if hub.SideBySideForTest(r2.Op) {
		t.Fatal("a server that ran the planner, then the draft, taught that it runs both at once")
	}
}

// onChat wraps srv's handler: each chat request goes to serve, told
// whether it is a planner's (its body has a format) and given the
// handler that answers it.
func onChat(srv *ollamatest.Scripted, serve func(w http.ResponseWriter, req *http.Request, plan bool, h http.Handler)) {
	srv.OnChat(func(w http.ResponseWriter, req *http.Request, body []byte, h http.Handler) {
		serve(w, req, bytes.Contains(body, []byte(`"format"`)), h)
	})
}

// await waits for ch, or 30 s (only a failure waits this long: then
// waitedOut, when given, is set). false: the request went away.
func await(req *http.Request, ch <-chan struct{}, waitedOut *atomic.Bool) bool {
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		if waitedOut != nil {
			waitedOut.Store(true)
		}
	case <-req.Context().Done():
		return false
	}
	return true
}

// firstWrite tells when the response's first bytes are written (begun,
// when set); with next, its later writes wait for next to close (at
// most 30 s).
type firstWrite struct {
	http.ResponseWriter
	begun  func()
	next   chan struct{}
	writes int
}

func (f *firstWrite) Write(b []byte) (int, error) {
	if f.writes++; f.writes > 1 && f.next != nil {
		select {
		case <-f.next:
		case <-time.After(30 * time.Second):
		}
	}
	n, err := f.ResponseWriter.Write(b)
	if f.begun != nil {
		f.begun()
	}
	return n, err
}

func (f *firstWrite) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// An undrafted turn (a client that shows nothing of a draft before the
// plan: plain text) sends the planner at once beside a draft that goes
// ahead, rather than after the draft's first words, which it would not
// show: here the server writes nothing of the draft until the planner's
// request has come, and the planner would wait an hour for the draft's
// first piece.
func TestAnUndraftedTurnSendsThePlannerAtOnce(t *testing.T) {
	r := hubtest.New(t, hubtest.Config{Modify: func(o *hub.Options) { o.Draft = true },
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			if len(req.Format) > 0 {
				return ollamatest.Reply{Chunks: []string{`{"kind":"chat",`}, Hang: true}
			}
			return ollamatest.Text(draftAnswer)
		}})
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	planIn := make(chan struct{})
	var once sync.Once
	var waitedOut atomic.Bool
	onChat(r.Srv, func(w http.ResponseWriter, req *http.Request, plan bool, h http.Handler) {
		if plan {
			once.Do(func() { close(planIn) })
		} else if !await(req, planIn, &waitedOut) {
			return
		}
		h.ServeHTTP(w, req)
	})
	chat, _ := r.Op.NewChat(false)
	turn, err := r.Op.AskWith(context.Background(), chat.ID, "Tell me something nice", hub.AskOptions{Undrafted: true}, nil)
	if err != nil || turn.Answer != draftAnswer || turn.Plan == nil || !turn.Plan.Early {
		t.Fatalf("%q %+v %v", turn.Answer, turn.Plan, err)
	}
	if waitedOut.Load() {
		t.Fatal("the planner waited for the draft's first words")
	}
	if !hub.SideBySideForTest(r.Op) {
		t.Fatal("the order learned is kept")
	}
}
