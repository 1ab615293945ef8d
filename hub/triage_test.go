package hub_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// triageScript answers the triage with triage, plans with plan, and
// answers everything else with a story.
func triageScript(triage ollamatest.Reply, plan string) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case hub.IsTriage(req):
			return triage
		case len(req.Format) > 0:
			return ollamatest.Reply{Chunks: []string{plan[:8], plan[8:20], plan[20:]}}
		}
		return ollamatest.Text("Once upon a time.")
	}
}

func requestKinds(reqs []api.ChatRequest) string {
	var out []string
	for _, req := range reqs {
		switch {
		case hub.IsTriage(&req):
			out = append(out, "triage")
		case len(req.Format) > 0:
			out = append(out, "plan")
		case len(req.Tools) > 0:
			out = append(out, "app")
		case isSeat(&req):
			out = append(out, "seat")
		default:
			out = append(out, "answer")
		}
	}
	return strings.Join(out, ",")
}

// Where the planner goes first (a server known to run one request at a
// time, or one whose order the probes did not learn), the hub asks the
// plain model first, in the draft's own context, whether the request is
// plain chat: on a clear chat the planner is not asked, the draft
// answers, and the draft's prompt is the triage's with its last message
// (the hub's question) off — what a one-slot server has cached. Any other
// reply — apps, a kind in other letters, no kind, prose, an error, a
// reply cut short — leaves the request to the planner, whose plan
// decides: an app request runs its app with no draft call, a chat plan
// the draft.
func TestTheTriageAnswersPlainChatWithoutThePlanner(t *testing.T) {
	chatPlan := `{"kind":"chat","steps":[{"functionality":"chat"}]}`
	appPlan := `{"kind":"apps","steps":[{"functionality":"writing.story"}]}`
	for _, c := range []struct {
		name   string
		triage ollamatest.Reply
		plan   string
		want   string // the requests, in order
	}{
		{"chat", ollamatest.JSON("chat"), appPlan, "triage,answer"},
		{"chat in pieces, spaced", ollamatest.Reply{Chunks: []string{" \"", "ch", "at\" "}}, appPlan, "triage,answer"},
		{"apps", ollamatest.JSON("apps"), appPlan, "triage,plan,app"},
		{"apps, the planner says chat", ollamatest.JSON("apps"), chatPlan, "triage,plan,answer"},
		{"another case", ollamatest.JSON("Chat"), appPlan, "triage,plan,app"},
		{"an object, not the kind", ollamatest.Text(`{"kind":"chat"}`), appPlan, "triage,plan,app"},
		{"more after it", ollamatest.Text(`"chat" "apps"`), appPlan, "triage,plan,app"},
		{"unquoted", ollamatest.Text(`chat`), appPlan, "triage,plan,app"},
		{"prose", ollamatest.Text(`chat, surely: "chat"`), appPlan, "triage,plan,app"},
		{"an error", ollamatest.Reply{Status: 500, Error: "the model failed"}, appPlan, "triage,plan,app"},
		{"cut short", ollamatest.Reply{Chunks: []string{`"chat`}, CutAfter: 1}, appPlan, "triage,plan,app"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := hubtest.New(t, hubtest.Config{Rules: allowExec, Prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
				Modify: func(o *hub.Options) { o.Draft = true }, Script: triageScript(c.triage, c.plan)})
			serialize(r.Srv)
			hub.SetSerialForTest(r.Op)
			chat, _ := r.Op.NewChat(false)
			turn, err := r.Op.Ask(context.Background(), chat.ID, "Write a story about a dragon", nil)
			if err != nil || turn.Plan == nil || turn.Plan.Fallback {
				t.Fatalf("%+v %v", turn.Plan, err)
			}
			reqs := r.Srv.Requests()
			// (An error is retried by the model client: its requests
			// count once here.)
			if got := strings.Replace(requestKinds(reqs), "triage,triage", "triage", 1); got != c.want {
				t.Fatalf("requests %s, want %s", got, c.want)
			}
			if turn.Plan.Triaged != (c.want == "triage,answer") {
				t.Fatalf("plan %+v: triaged %v", turn.Plan, turn.Plan.Triaged)
			}
			if c.want == "triage,answer" {
				if turn.Answer != "Once upon a time." || turn.Plan.Steps[0].App != hub.VanillaApp {
					t.Fatalf("answer %q, plan %+v", turn.Answer, turn.Plan)
				}
				tri, ans := reqs[0].Messages, reqs[1].Messages
				if len(tri) != len(ans)+1 || !reflect.DeepEqual(tri[:len(ans)], ans) {
					t.Fatalf("the answer's prompt is not the triage's with its question off:\n%+v\n%+v", tri, ans)
				}
				if q := tri[len(tri)-1].Content; !strings.Contains(q, "writing") || strings.Contains(q, "story") || strings.Contains(q, "Write a short piece") {
					t.Fatalf("the question names the apps, never their functionalities' descriptions: %q", q)
				}
			}
		})
	}
}

// The triage runs only where the planner goes first: with the draft
// ahead (a server seen running both at once) and where the plan must
// read the facts the hub holds, the planner decides alone.
func TestNoTriageWhereThePlannerDecidesAlone(t *testing.T) {
	r := hubtest.New(t, hubtest.Config{Modify: func(o *hub.Options) { o.Draft = true },
		Script: triageScript(ollamatest.JSON("chat"), `{"kind":"chat","steps":[{"functionality":"chat"}]}`)})
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	chat, _ := r.Op.NewChat(false)
	if _, err := r.Op.Ask(context.Background(), chat.ID, "Tell me something nice", nil); err != nil {
		t.Fatal(err)
	}
	if got := requestKinds(r.Srv.Requests()); strings.Contains(got, "triage") || !strings.Contains(got, "plan") {
		t.Fatalf("the draft ahead: requests %s", got)
	}
}

// On a server with one slot, which keeps the prompt it last read, a chat
// of plain turns through the triage reads far less than through the
// planner: the planner's prompt (its instructions and the catalog) and
// the answer's evict each other at every turn, while the triage's
// prompt is the answer's with the question after it — the answer finds
// its whole prompt cached, and the next triage the conversation.
func TestTheTriageKeepsAOneSlotServersCache(t *testing.T) {
	read := func(triage bool) (answerRead, total int) {
		r := hubtest.New(t, hubtest.Config{Script: upkeepScript, Modify: func(o *hub.Options) { o.Draft = true }})
		r.Srv.Slotted(ollamatest.SlotModel{Slots: 1, Decode: time.Millisecond})
		hub.SetSerialForTest(r.Op)
		if !triage {
			hub.NoTriageForTest(r.Op)
		}
		chat, _ := r.Op.NewChat(false)
		for _, q := range []string{"Tell me about the sea", "And the tides?", "Why is it blue?", "Is it cold?", "Thanks"} {
			if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
				t.Fatal(err)
			}
		}
		reqs := r.Srv.Requests()
		for i, u := range r.Srv.SlotUses() {
			total += u.Read
			if len(reqs[i].Format) == 0 {
				answerRead += u.Read
			}
		}
		if triage != strings.Contains(requestKinds(reqs), "triage") || triage == strings.Contains(requestKinds(reqs), "plan") {
			t.Fatalf("triage %v: requests %s", triage, requestKinds(reqs))
		}
		return answerRead, total
	}
	triAnswer, triTotal := read(true)
	planAnswer, planTotal := read(false)
	t.Logf("tokens read over five turns: %d through the triage (%d by the answers), %d through the planner (%d)", triTotal, triAnswer, planTotal, planAnswer)
	if triAnswer > 5*3 || 3*triTotal > planTotal {
		t.Fatalf("tokens read: %d through the triage (%d by the answers), %d through the planner (%d)", triTotal, triAnswer, planTotal, planAnswer)
	}
}

// Requests come in runs: after a plan that needed apps the planner
// decides alone, so a run of app requests pays one triage call, the
// first; once a plan is plain chat again the triage is back.
func TestARunOfAppRequestsPaysOneTriage(t *testing.T) {
	var plan atomic.Value
	plan.Store(`{"kind":"apps","steps":[{"functionality":"writing.story"}]}`)
	r := hubtest.New(t, hubtest.Config{Rules: allowExec, Prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
		Modify: func(o *hub.Options) { o.Draft = true },
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			if !hub.IsTriage(req) && len(req.Format) > 0 {
				return ollamatest.Text(plan.Load().(string))
			}
			return triageScript(ollamatest.JSON("apps"), "")(req)
		}})
	serialize(r.Srv)
	hub.SetSerialForTest(r.Op)
	chat, _ := r.Op.NewChat(false)
	seen := 0
	for i, c := range []struct{ plan, want string }{
		{`{"kind":"apps","steps":[{"functionality":"writing.story"}]}`, "triage,plan,app"},
		{`{"kind":"apps","steps":[{"functionality":"writing.story"}]}`, "plan,app"},
		{`{"kind":"apps","steps":[{"functionality":"writing.story"}]}`, "plan,app"},
		{`{"kind":"chat","steps":[{"functionality":"chat"}]}`, "plan,answer"},
		{`{"kind":"apps","steps":[{"functionality":"writing.story"}]}`, "triage,plan,app"},
	} {
		plan.Store(c.plan)
		if _, err := r.Op.Ask(context.Background(), chat.ID, "Write a story about a dragon", nil); err != nil {
			t.Fatal(err)
		}
		reqs := r.Srv.Requests()
		if got := requestKinds(reqs[seen:]); got != c.want {
			t.Fatalf("request %d: %s, want %s", i+1, got, c.want)
		}
		seen = len(reqs)
	}
}

// On a server seen running both at once the draft goes ahead whatever
// the last plan needed: the planner follows its first piece, so the chat
// request after a run of app requests has its first words as soon as
// after a chat turn (it had them after the planner's reading and the
// plan's kind), and an app request pays a withdrawn draft, counted apart.
// (Where the server is not known to run both at once a run of app
// requests pays none: TestARunOfAppRequestsPaysOneTriage.) A draft that
// goes ahead does so before the planner's request, which follows its
// first piece; its other pieces wait until the hub has the plan's first
// byte: a draft that ended before it, on this instant server, would
// unlearn the order.
func TestSideBySideTheDraftGoesAheadAfterAppRequests(t *testing.T) {
	var plan atomic.Value
	begun := ollamatest.NewGate()
	r := hubtest.New(t, hubtest.Config{Rules: allowExec, Prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
		Modify: func(o *hub.Options) {
			o.Draft = true
			planBegun(o, "", begun)
		},
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			if len(req.Format) > 0 {
				return ollamatest.Text(plan.Load().(string))
			}
			return afterPlanBegun(ollamatest.Text("Once upon a time."), begun)
		}})
	hub.SetSideBySideForTest(r.Op, true)
	hub.PlannerReadForTest(r.Op)
	hub.SetDraftLeadForTest(r.Op, time.Hour)
	chat, _ := r.Op.NewChat(false)
	apps, plain := `{"kind":"apps","steps":[{"functionality":"writing.story"}]}`, `{"kind":"chat","steps":[{"functionality":"chat"}]}`
	ask := func(chat, p string) int {
		plan.Store(p)
		begun.Shut()
		before := len(r.Srv.Requests())
		if _, err := r.Op.Ask(context.Background(), chat, "Write a story about a dragon", nil); err != nil {
			t.Fatal(err)
		}
		reqs := r.Srv.Requests()[before:]
		if len(reqs) > 0 && len(reqs[0].Format) == 0 && len(reqs[0].Tools) == 0 {
			return 1 // the draft, sent ahead of the planner
		}
		return 0
	}
	var drafts []int
	for _, p := range []string{apps, apps, apps, plain, plain, apps} {
		drafts = append(drafts, ask(chat.ID, p))
	}
	if fmt.Sprint(drafts) != "[1 1 1 1 1 1]" {
		t.Fatalf("drafts sent ahead, turn by turn: %v, want [1 1 1 1 1 1]", drafts)
	}
	if !hub.AppsRunForTest(r.Op) {
		t.Fatal("the last plan needed apps, yet the run of app requests is not known (this test shows nothing)")
	}
	other, _ := r.Op.NewChat(false)
	if got := []int{ask(other.ID, apps), ask(other.ID, apps)}; fmt.Sprint(got) != "[1 1]" {
		t.Fatalf("a new chat after a run of app requests: drafts ahead %v, want [1 1]", got)
	}
}

// On a server known to run both at once whose planner's prompt this
// process has not read — a serving process just started, the model just
// loaded: the planner's instructions and catalog, thousands of tokens,
// are cold — a turn is triaged beside the draft, which goes ahead as
// ever. Plain chat keeps the draft without asking the planner, and once
// the person is idle the server reads the planner's prompt for the
// chat's next plan; that turn goes to the planner, with no triage. An
// app request on the cold server is planned as ever once the triage
// says apps, its draft withdrawn.
func TestAColdPlannerIsTriagedBesideTheDraft(t *testing.T) {
	chatPlan := `{"kind":"chat","steps":[{"functionality":"chat"}]}`
	appPlan := `{"kind":"apps","steps":[{"functionality":"writing.story"}]}`
	sorted := func(reqs []api.ChatRequest) string {
		// (A seat, a background call of one token, goes as the streams
		// fell: not counted.)
		kinds := slices.DeleteFunc(strings.Split(requestKinds(reqs), ","), func(k string) bool { return k == "seat" })
		slices.Sort(kinds)
		return strings.Join(kinds, ",")
	}
	for _, c := range []struct {
		name, triage, plan string
		want               string // the first turn's requests, sorted
		triaged            bool
	}{
		{"chat", `"chat"`, chatPlan, "answer,triage", true},
		{"apps", `"apps"`, appPlan, "answer,app,plan,triage", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := hubtest.New(t, hubtest.Config{Rules: allowExec, Prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
				Modify: func(o *hub.Options) {
					o.Draft = true
					o.Memory = hub.MemoryOptions{Enabled: true, Every: 4}
				}, Script: triageScript(ollamatest.Text(c.triage), c.plan)})
			hub.SetSideBySideForTest(r.Op, true)
			chat, _ := r.Op.NewChat(false)
			turn, err := r.Op.Ask(context.Background(), chat.ID, "Write a story about a dragon", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := sorted(r.Srv.Requests()); got != c.want {
				t.Fatalf("the cold turn's requests %s, want %s", got, c.want)
			}
			if turn.Plan.Triaged != c.triaged || c.triaged && turn.Answer != "Once upon a time." {
				t.Fatalf("plan %+v, answer %q", turn.Plan, turn.Answer)
			}
			before := len(r.Srv.Requests())
			if err := r.Op.FlushMemory(context.Background()); err != nil { // the person is idle
				t.Fatal(err)
			}
			var warms, upkeeps int
			for _, req := range r.Srv.Requests()[before:] {
				if hub.IsWarm(&req) && len(req.Format) > 0 {
					warms++
				}
				if hub.UpkeepTask(&req) != "" {
					upkeeps++
				}
			}
			// The upkeep the turn left pending, promoted by the flush, runs
			// beside the warm job of the same chat (the hub's and the
			// plain spoke's: one call each here, the script's reply no
			// summary), not folded into it.
			if upkeeps != 2 {
				t.Fatalf("%d upkeep calls while idle, want 2 (the hub's and the plain spoke's)", upkeeps)
			}
			// One read of the planner's prompt either way: cold (the
			// triage decided), or after the plan, the request with what
			// served it appended (plannerKeepsSlot).
			if warms != 1 {
				t.Fatalf("%d warms of the planner's prompt while idle, want 1 (the planner read it: %v)", warms, !c.triaged)
			}
			before = len(r.Srv.Requests())
			if _, err := r.Op.Ask(context.Background(), chat.ID, "Write another story about a dragon", nil); err != nil {
				t.Fatal(err)
			}
			if got := requestKinds(r.Srv.Requests()[before:]); strings.Contains(got, "triage") || !strings.Contains(got, "plan") {
				t.Fatalf("the warm server's turn: requests %s, want the planner's and no triage", got)
			}
		})
	}
}
