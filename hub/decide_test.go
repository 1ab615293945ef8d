package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// The schema puts the plan's kind first, so that the model writes it
// first: the properties in that order, and kind required.
func TestThePlanSchemaAsksForTheKindFirst(t *testing.T) {
	b := hub.PlanSchema([]hub.Functionality{{Name: "chat"}, {Name: "clock.now"}})
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	p := string(s.Properties)
	if k, st := strings.Index(p, `"kind":`), strings.Index(p, `"steps":`); k < 0 || st < 0 || k > st || !strings.Contains(p, `"enum":["chat","apps"]`) {
		t.Fatalf("kind must be the first property, chat or apps: %s", p)
	}
	if len(s.Required) == 0 || s.Required[0] != "kind" {
		t.Fatalf("kind is required, first: %v", s.Required)
	}
}

// A plan whose first tokens say plain chat is acted on at once: the rest
// of the planner's answer is never waited for (here it never comes: the
// planner hangs after its first piece), the turn is answered by the
// vanilla spoke — drafted or not — and the plan says it was decided
// early. Phrased as a model may write it: spaced, fenced; and where the hub
// holds facts (as it does after a chat's first memory upkeep), since a
// chat step that needs one is kind apps.
func TestThePlansFirstTokensDecidePlainChat(t *testing.T) {
	for _, first := range []string{`{"kind":"chat",`, `{ "kind" : "chat" , "steps": [`, "```json\n{\"kind\": \"chat\"", `{"kind":"chat"`} {
		for _, c := range []struct{ drafted, facts bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			drafted := c.drafted
			var planCalls, withFacts atomic.Int32
			r := hubtest.New(t, hubtest.Config{Modify: func(o *hub.Options) {
				o.Draft = drafted
				o.Memory = hub.MemoryOptions{Enabled: c.facts}
			},
				Script: func(req *api.ChatRequest) ollamatest.Reply {
					if hub.UpkeepTask(req) != "" {
						// The memory upkeep (where it is on) after the turn.
						return ollamatest.JSON(map[string]any{})
					}
					if len(req.Format) > 0 {
						planCalls.Add(1)
						if strings.Contains(string(req.Format), `"trip.dates"`) {
							withFacts.Add(1)
						}
						return ollamatest.Reply{Chunks: []string{first}, Hang: true}
					}
					return ollamatest.Text(draftAnswer)
				}})
			if drafted {
				hub.SetSideBySideForTest(r.Op, true)
				hub.PlannerReadForTest(r.Op)
			}
			if c.facts {
				ns, err := r.Store.Namespace("hub")
				if err != nil {
					t.Fatal(err)
				}
				if err := ns.LongTerm().PutEntities(memory.Entity{Key: "trip.dates", Value: "May 3-9", Source: "user"}); err != nil {
					t.Fatal(err)
				}
			}
			chat, _ := r.Op.NewChat(false)
			// A bound only for a failure: without the decision the turn
			// waits on the hanging planner for ever.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			var calls int
			turn, err := r.Op.Ask(ctx, chat.ID, "Tell me something nice", func(e hub.Event) {
				if e.Kind == hub.EventAnswer {
					calls = e.Usage.Calls
				}
			})
			cancel()
			if err != nil {
				t.Fatalf("%q (%+v): %v", first, c, err)
			}
			if turn.Answer != draftAnswer || turn.Plan == nil || !turn.Plan.Early || len(turn.Plan.Steps) != 1 || turn.Plan.Steps[0].App != hub.VanillaApp {
				t.Fatalf("%q (%+v): answered by the vanilla spoke, decided early: %q %+v", first, c, turn.Answer, turn.Plan)
			}
			if planCalls.Load() != 1 || calls != 2 {
				t.Fatalf("%q (%+v): one planner call (not retried), two in all: %d, %d", first, c, planCalls.Load(), calls)
			}
			if c.facts != (withFacts.Load() == 1) {
				t.Fatalf("%q (%+v): the planner was told of the facts held %d times", first, c, withFacts.Load())
			}
		}
	}
}

// A plan whose first tokens say apps withdraws the draft at once, before
// it names any functionality (here it never does: the planner hangs).
func TestThePlansFirstTokensWithdrawTheDraft(t *testing.T) {
	r := hubtest.New(t, hubtest.Config{Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
		Modify: func(o *hub.Options) { o.Draft = true },
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			if len(req.Format) > 0 {
				return ollamatest.Reply{Chunks: []string{`{"kind": "apps", `}, Hang: true}
			}
			rep := ollamatest.Text(draftAnswer)
			rep.Hang = true // the draft goes on until it is given up
			return rep
		}})
	// The server tells when the draft's request is given up: its client
	// went away while the planner still hangs.
	gone := make(chan struct{})
	var once sync.Once
	r.Srv.OnChat(func(w http.ResponseWriter, req *http.Request, body []byte, h http.Handler) {
		h.ServeHTTP(w, req)
		if !bytes.Contains(body, []byte(`"format"`)) {
			once.Do(func() { close(gone) })
		}
	})
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	// The planner follows the draft's first piece: the draft's request is
	// on the server before the plan can withdraw it.
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	chat, _ := r.Op.NewChat(false)
	ctx, cancel := context.WithCancel(context.Background())
	var drafted, withdrawn atomic.Bool
	done := make(chan error, 1)
	go func() {
		_, err := r.Op.Ask(ctx, chat.ID, "Write a story about a dragon", func(e hub.Event) {
			switch e.Kind {
			case hub.EventDraft:
				drafted.Store(true)
			case hub.EventDraftWithdrawn:
				withdrawn.Store(true)
			}
		})
		done <- err
	}()
	select {
	case <-gone:
	case err := <-done:
		t.Fatalf("the turn ended before the draft was given up: %v", err)
	case <-time.After(time.Minute): // only a failure waits this long
		t.Fatal("the draft must be withdrawn at the plan's first tokens: its request is never given up")
	}
	cancel() // the rest of the plan is not needed for this test
	<-done
	if drafted.Load() && !withdrawn.Load() {
		t.Fatal("a draft that was shown must be withdrawn where the clients see it")
	}
}

// orderScript plans in three slow pieces and drafts word by word: a
// short answer when asked "briefly", a long one otherwise, whose pieces
// after the first wait for gate (afterPlanBegun; nil: none waits).
func orderScript(gate *ollamatest.Gate) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			b := `{"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`
			return ollamatest.Reply{Chunks: []string{b[:10], b[10:40], b[40:]}, Delay: 80 * time.Millisecond}
		}
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "briefly") {
			return ollamatest.Text("Hi.")
		}
		r := ollamatest.Text(draftAnswer + " " + draftAnswer)
		r.Delay = 40 * time.Millisecond
		return afterPlanBegun(r, gate)
	}
}

// The draft order is learned once per model server and kept: a new
// operator (a new serving process) over the same order file sends its
// first turn's draft first; short answers, which end before the
// planner's first byte, do not unlearn it; another server has learned
// nothing; a broken file is nothing learned. (Each planner follows its
// draft's first piece, and a long draft's other pieces wait until the
// hub has the plan's first byte: the probe's lesson is the script's.)
func TestTheDraftOrderSurvivesARestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "servers.json")
	begun := ollamatest.NewGate()
	ask := func(r *hubtest.Rig, srv *ollamatest.Scripted, q string) []api.ChatRequest {
		t.Helper()
		begun.Shut()
		chat, _ := r.Op.NewChat(false)
		before := len(srv.Requests())
		if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
			t.Fatal(err)
		}
		return srv.Requests()[before:]
	}
	first := hubtest.New(t, hubtest.Config{Script: orderScript(begun), Modify: func(o *hub.Options) {
		o.Draft, o.Order = true, hub.OpenServerOrder(file)
		planBegun(o, "", begun)
	}})
	hub.SetDraftLeadForTest(first.Op, time.Hour)
	if !firstIsDraft(ask(first, first.Srv, "Tell me something nice")) || !hub.SideBySideForTest(first.Op) {
		t.Fatal("the first turn's draft goes ahead as a probe, and learns that the server runs both at once")
	}
	first.Close()

	srv := first.Srv
	again := hubtest.New(t, hubtest.Config{Script: orderScript(begun), Modify: func(o *hub.Options) {
		o.Draft, o.Order = true, hub.OpenServerOrder(file)
		planBegun(o, srv.Host(), begun)
	}})
	hub.SetDraftLeadForTest(again.Op, time.Hour)
	if !firstIsDraft(ask(again, srv, "Tell me something nice")) {
		t.Fatal("after a restart the learned order sends the draft first")
	}
	for range 3 {
		if !firstIsDraft(ask(again, srv, "Say hello briefly")) {
			t.Fatal("a short answer does not unlearn the order")
		}
	}
	if !hub.SideBySideForTest(again.Op) {
		t.Fatal("the order must still be known")
	}
	if hub.OpenServerOrder(file).SideBySide("http://127.0.0.1:1") {
		t.Fatal("another server has learned nothing")
	}
	hc, _ := llm.New(llm.Config{Host: srv.Host(), Model: hubtest.Model}, nil)
	if !hub.OpenServerOrder(file).SideBySide(hc.Host()) {
		t.Fatal("the file holds the order, by host")
	}
	if err := os.WriteFile(file, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if hub.OpenServerOrder(file).SideBySide(hc.Host()) {
		t.Fatal("a broken file is nothing learned")
	}
}

// Every planner call asks for room for a whole plan, whatever answer
// length the model's own parameters set.
func TestAPlanHasRoomToFinish(t *testing.T) {
	r := hubtest.New(t, hubtest.Config{Script: ollamatest.Planned(ollamatest.Reply{Chunks: []string{`{"kind":"apps","steps":[{"id":"s1","functionality":"clock.now","query":"time","depends_on":[]}]}`}},
		func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("noon") }), Rules: allowExec})
	chat, _ := r.Op.NewChat(false)
	if _, err := r.Op.Ask(context.Background(), chat.ID, "what time is it", nil); err != nil {
		t.Fatal(err)
	}
	plans := 0
	for _, req := range r.Srv.Requests() {
		if len(req.Format) > 0 && strings.Contains(string(req.Format), `"steps"`) {
			plans++
			if n, ok := req.Options["num_predict"].(float64); !ok || n < 1024 {
				t.Fatalf("a planner call must leave room for a plan: num_predict %v", req.Options["num_predict"])
			}
		}
	}
	if plans == 0 {
		t.Fatal("no planner call seen")
	}
}

// Where the planner goes first (the server not known to run two requests
// at once, its probes spent), the draft waits for the plan's first
// tokens: an app request costs no draft call at all, and a chat request's
// draft is its answer.
func TestAnAppRequestCostsNoDraft(t *testing.T) {
	vanillaCalls := func(reqs []api.ChatRequest) (n int) {
		for _, req := range reqs {
			// Not an app spoke's (its tools), nor the seat (seat.go).
			if len(req.Format) == 0 && len(req.Tools) == 0 && !isSeat(&req) && len(req.Messages) > 0 && req.Messages[0].Content == hub.VanillaSystemForTest {
				n++
			}
		}
		return n
	}
	for _, kind := range []string{"apps", "chat"} {
		fn := map[string]string{"apps": "writing.story", "chat": "chat"}[kind]
		plan := `{"kind":"` + kind + `","steps":[{"id":"s1","functionality":"` + fn + `","query":"q","depends_on":[]}]}`
		r := hubtest.New(t, hubtest.Config{Rules: allowExec, Prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
			Modify: func(o *hub.Options) { o.Draft = true },
			Script: ollamatest.Planned(ollamatest.Reply{Chunks: []string{plan[:8], plan[8:20], plan[20:]}, Delay: 50 * time.Millisecond},
				func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("Once upon a time.") })})
		hub.SetProbesForTest(r.Op, hub.DraftProbes)
		chat, _ := r.Op.NewChat(false)
		turn, err := r.Op.Ask(context.Background(), chat.ID, "Write a story about a dragon", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := vanillaCalls(r.Srv.Requests())
		if want := map[string]int{"apps": 0, "chat": 1}[kind]; got != want || turn.Plan == nil || turn.Plan.Fallback {
			t.Fatalf("%s: %d plain answer calls, want %d (turn %+v)", kind, got, want, turn.Plan)
		}
	}
}

func TestKindPending(t *testing.T) {
	for text, want := range map[string]bool{
		"": true, " ": true, "{": true, `{"`: true, `{"ki`: true, `{ "kind"`: true, `{"kind":`: true, `{"kind": "ch`: true, "```json\n{\"kind\"": true,
		`{"steps"`: false, `{"s`: false, `[`: false, `{"kind":"chat"`: false, `{"kind": 1`: false, `hello`: false,
	} {
		if got := hub.KindPendingForTest(text); got != want {
			t.Errorf("%q: pending %v, want %v", text, got, want)
		}
	}
}

// A chat plan, while the order is not known (and the probes are spent),
// holds its planner until the draft's first piece: on a server that runs both at once the piece comes
// while the planner still streams, and the order is learned from the
// first chat turn (though the plan decides early); on one that runs one
// request at a time the wait ends the planner, and that is learned, so
// that later turns do not wait.
//
// The plan streams until the lesson is learned (its pieces after the
// first wait for it: a plan that ended first would teach nothing), and
// on the first server the window has no limit: the draft's first piece
// ends it, however late the scheduler runs it. Once the order is
// learned the draft goes ahead, its first piece before the planner's
// request and the rest after the plan's first byte: a draft that ended
// before it would unlearn the order (draft.planned).
func TestAChatTurnTeachesTheOrder(t *testing.T) {
	plan := `{"kind":"chat","steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`
	for _, serial := range []bool{false, true} {
		var op atomic.Pointer[hub.Operator]
		learned := func() bool {
			if serial {
				return hub.SerialForTest(op.Load())
			}
			return hub.SideBySideForTest(op.Load())
		}
		begun := ollamatest.NewGate()
		r := hubtest.New(t, hubtest.Config{Modify: func(o *hub.Options) {
			o.Draft = true
			planBegun(o, "", begun)
		},
			Script: ollamatest.Planned(ollamatest.Reply{Chunks: []string{plan[:15], plan[15:30], plan[30:40], plan[40:50], plan[50:60], plan[60:]},
				Before: func(i int) {
					if i >= 1 {
						ollamatest.Until(context.Background(), learned)
					}
				}},
				func(*api.ChatRequest) ollamatest.Reply { return afterPlanBegun(ollamatest.Text(draftAnswer), begun) })})
		op.Store(r.Op)
		if serial {
			serialize(r.Srv)
		} else {
			hub.SetProbeWindowForTest(r.Op, time.Hour)
		}
		hub.SetDraftLeadForTest(r.Op, time.Hour)
		hub.NoTriageForTest(r.Op) // the planner's chat plan is what teaches here
		hub.SetProbesForTest(r.Op, hub.DraftProbes)
		chat, _ := r.Op.NewChat(false)
		for turn := 1; turn <= 2; turn++ {
			begun.Shut()
			got, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice", nil)
			if err != nil || got.Answer != draftAnswer {
				t.Fatalf("serial %v, turn %d: %q %v", serial, turn, got.Answer, err)
			}
			if side := hub.SideBySideForTest(r.Op); side == serial {
				t.Fatalf("serial %v, turn %d: side by side %v", serial, turn, side)
			}
		}
		if serial && !hub.SerialForTest(r.Op) {
			t.Fatal("a server that runs one request at a time is known as such")
		}
	}
}

// On a server known to run one request at a time, no draft sits between
// the planner and its retry: a first plan that is unusable (and says no
// kind) is retried at once, and the draft starts only when the plan
// keeps it.
func TestNoDraftBetweenThePlannerAndItsRetry(t *testing.T) {
	var plans atomic.Int32
	r := hubtest.New(t, hubtest.Config{Modify: func(o *hub.Options) { o.Draft = true },
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			if hub.IsTriage(req) {
				// Not sure: the planner decides, as with any reply
				// but a clear chat.
				return ollamatest.Text(`"ch`)
			}
			if len(req.Format) > 0 {
				if plans.Add(1) == 1 {
					return ollamatest.Reply{Chunks: []string{`{"steps": `, `"garbled"}`}, Delay: 50 * time.Millisecond}
				}
				return ollamatest.Reply{Chunks: []string{`{"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`}}
			}
			return ollamatest.Text(draftAnswer)
		}})
	serialize(r.Srv)
	hub.SetSerialForTest(r.Op)
	chat, _ := r.Op.NewChat(false)
	turn, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice", nil)
	if err != nil || turn.Answer != draftAnswer || turn.Plan == nil || !turn.Plan.Retried {
		t.Fatalf("a retried chat plan, answered by the draft: %+v %v", turn, err)
	}
	var order []string
	for _, req := range r.Srv.Requests() {
		switch {
		case hub.IsTriage(&req):
			order = append(order, "triage")
		case len(req.Format) > 0:
			order = append(order, "plan")
		default:
			order = append(order, "draft")
		}
	}
	if strings.Join(order, ",") != "triage,plan,plan,draft" {
		t.Fatalf("the server was sent %v: a draft between the planner and its retry", order)
	}
}

// A server learned serial long ago is probed again; the probes count is
// kept with the order, and counting them does not make the old lesson
// new (it would stop the probes and the drafts ahead for another hour).
func TestAProbeDoesNotRenewAnOldLesson(t *testing.T) {
	file := filepath.Join(t.TempDir(), hub.ServerOrderFileForTest)
	r := hubtest.New(t, hubtest.Config{Script: orderScript(nil), Modify: func(o *hub.Options) { o.Draft = true }})
	host := r.Srv.Host()
	if hc, err := llm.New(llm.Config{Host: host, Model: hubtest.Model}, nil); err == nil {
		host = hc.Host()
	}
	old := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339Nano)
	if err := os.WriteFile(file, []byte(`{"`+host+`": {"side_by_side": false, "serial": true, "learned": "`+old+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	order := hub.OpenServerOrder(file)
	r2 := hubtest.New(t, hubtest.Config{Script: orderScript(nil), Modify: func(o *hub.Options) {
		o.Draft, o.Order = true, order
		o.HubModel, _ = llm.New(llm.Config{Host: r.Srv.Host(), Model: hubtest.Model}, nil)
		o.SpokeModel = func(string) (spokes.Model, error) {
			return llm.New(llm.Config{Host: r.Srv.Host(), Model: hubtest.Model}, nil)
		}
	}})
	serialize(r.Srv)
	hub.SetDraftLeadForTest(r2.Op, time.Hour) // the planner follows the draft's first piece
	chat, _ := r2.Op.NewChat(false)
	before := len(r.Srv.Requests())
	if _, err := r2.Op.Ask(context.Background(), chat.ID, "Say hello briefly", nil); err != nil {
		t.Fatal(err)
	}
	if !firstIsDraft(r.Srv.Requests()[before:]) {
		t.Fatal("a lesson two hours old is probed again: the draft goes ahead")
	}
	if hub.SerialNowForTest(r2.Op) {
		t.Fatal("counting the probe made the old lesson new")
	}
	if n := hub.ProbesForTest(r2.Op); n != 1 {
		t.Fatalf("probes %d, want 1", n)
	}
}

// Spent probes are sent again a day after the last: a server whose drafts
// all ended before the planner's first byte, or that got more slots
// since, is probed anew; within the day the planner goes first.
func TestSpentProbesAreSentAgainADayLater(t *testing.T) {
	for _, c := range []struct {
		ago   time.Duration
		ahead bool
	}{{time.Hour, false}, {48 * time.Hour, true}} {
		r := hubtest.New(t, hubtest.Config{Script: orderScript(nil), Modify: func(o *hub.Options) { o.Draft = true }})
		host := r.Srv.Host()
		if hc, err := llm.New(llm.Config{Host: host, Model: hubtest.Model}, nil); err == nil {
			host = hc.Host()
		}
		file := filepath.Join(t.TempDir(), hub.ServerOrderFileForTest)
		at := time.Now().Add(-c.ago).UTC().Format(time.RFC3339Nano)
		if err := os.WriteFile(file, []byte(`{"`+host+`": {"side_by_side": false, "probes": 3, "probed_at": "`+at+`"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		r2 := hubtest.New(t, hubtest.Config{Script: orderScript(nil), Modify: func(o *hub.Options) {
			o.Draft, o.Order = true, hub.OpenServerOrder(file)
			o.HubModel, _ = llm.New(llm.Config{Host: r.Srv.Host(), Model: hubtest.Model}, nil)
			o.SpokeModel = func(string) (spokes.Model, error) {
				return llm.New(llm.Config{Host: r.Srv.Host(), Model: hubtest.Model}, nil)
			}
		}})
		serialize(r.Srv) // teaches nothing: the probe's effect alone is seen
		hub.SetDraftLeadForTest(r2.Op, time.Hour)
		chat, _ := r2.Op.NewChat(false)
		before := len(r.Srv.Requests())
		if _, err := r2.Op.Ask(context.Background(), chat.ID, "Say hello briefly", nil); err != nil {
			t.Fatal(err)
		}
		if got := firstIsDraft(r.Srv.Requests()[before:]); got != c.ahead {
			t.Fatalf("probes spent %s ago: draft ahead %v, want %v", c.ago, got, c.ahead)
		}
		if want := map[bool]int{false: 3, true: 1}[c.ahead]; hub.ProbesForTest(r2.Op) != want {
			t.Fatalf("probes spent %s ago: count %d, want %d", c.ago, hub.ProbesForTest(r2.Op), want)
		}
	}
}
