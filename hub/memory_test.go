package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// A summary and entities appear after a turn, for the hub and for the
// spoke, each made by its owner's own model; the hub's from the user's
// words only. The next turn's planner and spoke read them.
func TestSummariesAndEntitiesByTheOwnersModel(t *testing.T) {
	t.Parallel()
	r := newMemRig(t, memRigOpts{script: func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case isSummary(req):
			return ollamatest.JSON(map[string]string{"summary": "summary by " + req.Model})
		case isExtract(req) && req.Model == hubModel:
			return ollamatest.JSON(map[string]any{"entities": []map[string]string{{"key": "user.name", "value": "Ada"}}})
		case isExtract(req):
			return ollamatest.JSON(map[string]any{"entities": []map[string]string{{"key": "greeting.style", "value": "warm"}, {"key": "Not A Key!", "value": "x"}}})
		case isPlan(req):
			return chatPlan
		}
		return ollamatest.Text("Hello Ada. SPOKE-ANSWER")
	}})
	chat, _ := r.op.NewChat(false)
	r.ask(t, chat.ID, "My name is Ada, hello")
	r.flush(t)

	hubLT, spokeLT := r.lt(t, "hub"), r.lt(t, "spoke/vanilla")
	if s, err := hubLT.Summary(chat.ID); err != nil || s.Text != "summary by "+hubModel || s.Model != hubModel || s.Through != 1 {
		t.Fatalf("hub summary %+v %v", s, err)
	}
	if s, err := spokeLT.Summary(chat.ID); err != nil || s.Text != "summary by m-vanilla" || s.Model != "m-vanilla" {
		t.Fatalf("spoke summary %+v %v", s, err)
	}
	if e, err := hubLT.Entity("user.name"); err != nil || e.Value != "Ada" || e.Model != hubModel || e.Source != "user" || e.Chat != chat.ID {
		t.Fatalf("hub entity %+v %v", e, err)
	}
	es, _ := spokeLT.Entities()
	if len(es) != 1 || es[0].Key != "greeting.style" || es[0].Model != "m-vanilla" {
		t.Fatalf("spoke entities (a malformed key must be dropped): %+v", es)
	}
	// The hub keeps the spoke's summary and entities as its record.
	hubNS, _ := r.store.Namespace("hub")
	rec, _ := hubNS.Record("vanilla")
	if s, err := rec.Summary(chat.ID); err != nil || s.Text != "summary by m-vanilla" {
		t.Fatalf("hub's record of the spoke %+v %v", s, err)
	}
	// Which model the server saw for each memory call, and what it read.
	var seen []string
	for _, req := range r.srv.Requests() {
		kind := ""
		switch {
		case isSummary(&req):
			kind = "summary"
		case isExtract(&req):
			kind = "extract"
		default:
			continue
		}
		seen = append(seen, kind+"@"+req.Model)
		if req.Model == hubModel && strings.Contains(promptOf(req), "SPOKE-ANSWER") {
			t.Errorf("the hub's %s read an answer, not just the user's words", kind)
		}
		if req.Model == "m-vanilla" && !strings.Contains(promptOf(req), "SPOKE-ANSWER") {
			t.Errorf("the spoke's %s did not read its own log", kind)
		}
	}
	slices.Sort(seen)
	if want := []string{"extract@hub-model", "extract@m-vanilla", "summary@hub-model", "summary@m-vanilla"}; !slices.Equal(seen, want) {
		t.Fatalf("memory calls %v, want %v", seen, want)
	}

	// Working memory: the next planner reads the hub's summary and entity
	// names; the next spoke call reads its own summary.
	r.ask(t, chat.ID, "and again")
	reqs := r.srv.Requests()
	var planner, spoke string
	for _, req := range reqs {
		switch {
		case isPlan(&req):
			planner = promptOf(req)
		case !isSummary(&req) && !isExtract(&req):
			spoke = promptOf(req)
		}
	}
	if !strings.Contains(planner, "summary by "+hubModel) || !strings.Contains(planner, "user.name") || strings.Contains(planner, "summary by m-vanilla") {
		t.Fatalf("planner's view of memory:\n%s", planner)
	}
	if !strings.Contains(spoke, "summary by m-vanilla") || strings.Contains(spoke, "summary by "+hubModel) {
		t.Fatalf("spoke's working memory:\n%s", spoke)
	}
}

// Invariant 4: the recall tool of spoke alpha finds alpha's own facts and
// nothing of beta's namespace, of the hub's, or of the hub's record of
// beta — even when they match.
func TestRecallSearchesOnlyItsOwnNamespace(t *testing.T) {
	t.Parallel()
	// An argument the plan leaves open: the spoke's model makes the call
	// (a call the plan binds whole is made without it).
	read := fn("now", `{"type":"object","properties":{"zone":{"type":"string"}}}`, `{"type":"object","properties":{"time":{"type":"string"},"timezone":{"type":"string"}},"required":["time","timezone"]}`, apps.EffectRead)
	alpha := &fakeApp{m: apps.Manifest{Name: "alpha", Description: "alpha app", Functions: []apps.Function{read}, Provides: map[string]string{"clock.now": "now"}},
		fn: func(string, map[string]any) (any, error) {
			return map[string]string{"time": "12:00", "timezone": "UTC"}, nil
		}}
	beta := &fakeApp{m: apps.Manifest{Name: "beta", Description: "beta app", Functions: []apps.Function{read}, Provides: map[string]string{"clock.now": "now"}},
		fn: alpha.fn}
	r := newMemRig(t, memRigOpts{apps: []apps.App{alpha, beta}, rules: allowExec, prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
		script: func(req *api.ChatRequest) ollamatest.Reply {
			switch {
			case isPlan(req):
				return plan(map[string]any{"id": "s1", "functionality": "clock.now", "app": "alpha"})
			case len(req.Tools) > 0 && lastRole(req, "tool") == "":
				return call(spokesRecall, map[string]any{"query": "zebra code"})
			}
			return ollamatest.Text("done")
		}})
	put := func(owner, key, value string) {
		if err := r.lt(t, owner).PutEntities(memory.Entity{Key: key, Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	put("spoke/alpha", "code.alpha", "ZEBRA-ALPHA")
	put("spoke/beta", "code.beta", "ZEBRA-BETA")
	put("hub", "code.hub", "ZEBRA-HUB")
	hubNS, _ := r.store.Namespace("hub")
	rec, _ := hubNS.Record("beta")
	rec.PutEntities(memory.Entity{Key: "code.rec", Value: "ZEBRA-RECORD"})

	chat, _ := r.op.NewChat(false)
	r.ask(t, chat.ID, "what time is it on alpha")
	var read_ string
	offered := false
	for _, req := range r.srv.Requests() {
		if req.Model != "m-alpha" {
			continue
		}
		for _, tl := range req.Tools {
			offered = offered || tl.Function.Name == spokesRecall
		}
		if c := lastRole(&req, "tool"); c != "" {
			read_ = c
		}
	}
	if !offered || !strings.Contains(read_, "ZEBRA-ALPHA") {
		t.Fatalf("recall must be offered and find the spoke's own fact: offered=%v read %q", offered, read_)
	}
	for _, foreign := range []string{"ZEBRA-BETA", "ZEBRA-HUB", "ZEBRA-RECORD"} {
		if strings.Contains(read_, foreign) {
			t.Errorf("alpha's recall read %s", foreign)
		}
	}
}

const spokesRecall = "recall"

// Data the hub holds reaches a spoke only after a data grant that shows
// the value; the planner sees only its name.
func TestDataReachesASpokeOnlyAfterADataGrant(t *testing.T) {
	t.Parallel()
	const dates = "2025-05-03 to 2025-05-07"
	for _, answer := range []permissions.Answer{permissions.AnswerDeny, permissions.AnswerOnce} {
		t.Run(string(answer), func(t *testing.T) {
			t.Parallel()
			trip := &fakeApp{m: apps.Manifest{Name: "trips", Description: "trips app",
				Functions: []apps.Function{fn("plan", `{"type":"object","properties":{"destination":{"type":"string"}}}`, `{"type":"object","properties":{"itinerary":{"type":"string"}},"required":["itinerary"]}`, apps.EffectWrite)},
				Provides:  map[string]string{"travel.plan_trip": "plan"}}, fn: func(string, map[string]any) (any, error) { return map[string]string{"itinerary": "x"}, nil }}
			r := newMemRig(t, memRigOpts{apps: []apps.App{trip}, rules: allowExec, prompter: permissionstest.NewPrompter(answer),
				script: func(req *api.ChatRequest) ollamatest.Reply {
					switch {
					case isPlan(req) && strings.Contains(string(req.Format), "trip.dates"):
						return plan(map[string]any{"id": "s1", "functionality": "travel.plan_trip", "needs": []string{"trip.dates"}})
					case isPlan(req):
						return plan(bind(map[string]any{"id": "s1", "functionality": "travel.plan_trip"}, "destination", "Lisbon"))
					case isExtract(req):
						return ollamatest.JSON(map[string]any{"entities": []any{}})
					}
					return ollamatest.Text("planned")
				}})
			r.lt(t, "hub").PutEntities(memory.Entity{Key: "trip.dates", Value: dates, Source: "user", Labels: []string{"personal"}})
			chat, _ := r.op.NewChat(false)
			_, evs := r.ask(t, chat.ID, "plan the hotel for that trip")
			var data *permissions.Request
			for _, e := range evs {
				if e.Kind == hub.EventPermission && e.Permission.Kind == permissions.KindData {
					data = e.Permission
				}
			}
			if data == nil || data.Object != "trips" || !strings.Contains(string(data.Args), dates) || !strings.Contains(data.Warning, "personal") {
				t.Fatalf("the data dialog must show the value, the app and the label: %+v", data)
			}
			var args map[string]string
			if json.Unmarshal(data.Args, &args) != nil || args["trip.dates"] != dates {
				t.Fatalf("dialog args %s", data.Args)
			}
			sawValue := false
			for _, req := range r.srv.Requests() {
				p := promptOf(req)
				if isPlan(&req) && (strings.Contains(p, "2025-05-03") || !strings.Contains(p, "trip.dates")) {
					t.Fatalf("the planner must see the name, never the value:\n%s", p)
				}
				if req.Model == "m-trips" && strings.Contains(p, "2025-05-03") {
					sawValue = true
				}
			}
			if want := answer != permissions.AnswerDeny; sawValue != want {
				t.Fatalf("answer %s: the spoke saw the value = %v", answer, sawValue)
			}
		})
	}
}

// The background worker never blocks a turn: with a summary call that
// hangs, the next turn still answers, and Close cancels the hanging job
// and waits for the worker (goleak checks nothing is left).
func TestMemoryWorkNeverBlocksATurn(t *testing.T) {
	t.Parallel()
	r := newMemRig(t, memRigOpts{script: func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case isSummary(req):
			return ollamatest.Reply{Chunks: []string{"never"}, Hang: true}
		case isPlan(req):
			return chatPlan
		}
		return ollamatest.Text("answer")
	}})
	chat, _ := r.op.NewChat(false)
	r.ask(t, chat.ID, "one")
	deadline := time.Now().Add(5 * time.Second)
	for !hungInSummary(r) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !hungInSummary(r) {
		t.Fatal("the summary job never started")
	}
	start := time.Now()
	if turn, _ := r.ask(t, chat.ID, "two"); turn.Answer != "answer" || time.Since(start) > 3*time.Second {
		t.Fatalf("a turn waited for memory work: %v", time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.op.FlushMemory(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("flush with a hanging job: %v", err)
	}
	start = time.Now()
	r.close()
	if time.Since(start) > 3*time.Second {
		t.Fatalf("Close waited %v for a hanging job", time.Since(start))
	}
}

func hungInSummary(r *memRig) bool {
	for _, req := range r.srv.Requests() {
		if isSummary(&req) {
			return true
		}
	}
	return false
}

// Forget deletes an app's namespace and the hub's record of it; deleting a
// chat deletes every summary of it.
func TestForgetAndDeleteChat(t *testing.T) {
	t.Parallel()
	r := newMemRig(t, memRigOpts{script: func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case isSummary(req):
			return ollamatest.JSON(map[string]string{"summary": "remembered"})
		case isExtract(req):
			return ollamatest.JSON(map[string]any{"entities": []map[string]string{{"key": "fact.one", "value": "1"}}})
		case isPlan(req):
			return chatPlan
		}
		return ollamatest.Text("answer")
	}})
	chat, _ := r.op.NewChat(false)
	r.ask(t, chat.ID, "hello")
	r.flush(t)
	if m, err := r.op.Memory("vanilla"); err != nil || len(m.Summaries) != 1 || len(m.Entities) != 1 || m.Record == nil || len(m.Record.Summaries) != 1 {
		t.Fatalf("memory of vanilla %+v %v", m, err)
	}
	if err := r.op.Forget("vanilla"); err != nil {
		t.Fatal(err)
	}
	if owners, _ := r.store.Owners(); slices.Contains(owners, "spoke/vanilla") {
		t.Fatalf("the namespace survived: %v", owners)
	}
	if m, _ := r.op.Memory("vanilla"); len(m.Summaries)+len(m.Entities)+len(m.Record.Summaries)+len(m.Record.Entities) != 0 {
		t.Fatalf("vanilla still remembers: %+v", m)
	}
	if m, _ := r.op.Memory("hub"); len(m.Summaries) != 1 {
		t.Fatalf("forgetting an app must keep the hub's memory: %+v", m)
	}
	if err := r.op.Forget("../hub"); err == nil {
		t.Fatal("a bad owner name must be refused")
	}
	if err := r.op.DeleteChat(chat.ID); err != nil {
		t.Fatal(err)
	}
	if m, _ := r.op.Memory("hub"); len(m.Summaries) != 0 || len(m.Entities) != 0 {
		t.Fatalf("the deleted chat's summary and entities survived: %+v", m)
	}
}

// An app's typed result never overwrites a fact the user stated: the
// app's value is kept beside it, under the app's name.
func TestUserFactsAreNotOverwrittenByApps(t *testing.T) {
	t.Parallel()
	trip := &fakeApp{m: apps.Manifest{Name: "trips", Description: "trips app",
		Functions: []apps.Function{fn("plan", `{"type":"object","properties":{"destination":{"type":"string"}}}`, `{"type":"object","properties":{"itinerary":{"type":"string"},"booking":{"type":"string"}},"required":["itinerary"]}`, apps.EffectWrite)},
		Provides:  map[string]string{"travel.plan_trip": "plan"}}, fn: func(string, map[string]any) (any, error) {
		return map[string]string{"itinerary": "x", "booking": "B-999 (the app's)"}, nil
	}}
	r := newMemRig(t, memRigOpts{apps: []apps.App{trip}, rules: allowExec, prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
		script: func(req *api.ChatRequest) ollamatest.Reply {
			switch {
			case isPlan(req):
				return plan(bind(map[string]any{"id": "s1", "functionality": "travel.plan_trip"}, "destination", "Lisbon"))
			case isExtract(req), isSummary(req):
				return ollamatest.JSON(map[string]any{"entities": []any{}, "summary": "s"})
			}
			for _, m := range req.Messages {
				if m.Role == "tool" {
					return ollamatest.Text("planned")
				}
			}
			return call("plan", map[string]any{"destination": "Lisbon"})
		}})
	lt := r.lt(t, "hub")
	lt.PutEntities(memory.Entity{Key: "travel.booking", Value: "B-123 (mine)", Source: "user"})
	chat, _ := r.op.NewChat(false)
	r.ask(t, chat.ID, "plan my trip to Lisbon")
	if e, err := lt.Entity("travel.booking"); err != nil || e.Value != "B-123 (mine)" || e.Source != "user" {
		t.Fatalf("the user's fact was overwritten: %+v %v", e, err)
	}
	if e, err := lt.Entity("travel.booking.trips"); err != nil || !strings.Contains(e.Value, "B-999") || !strings.HasPrefix(e.Source, "trips") {
		t.Fatalf("the app's value must be kept beside it, attributed: %+v %v", e, err)
	}
}

// Once the operator's Close has begun no spoke starts: a read ahead the
// memory worker still makes (or a turn still running) would start one
// after Close stopped them all, and nothing would stop it.
func TestNoSpokeStartsOnceTheOperatorCloses(t *testing.T) {
	t.Parallel()
	r := hubtest.New(t, hubtest.Config{})
	chat, _ := r.Op.NewChat(false)
	if !hub.SpokeStartsForTest(r.Op, chat.ID, hub.VanillaApp) {
		t.Fatal("no spoke starts on an open operator (this test shows nothing)")
	}
	if err := r.Op.Close(); err != nil {
		t.Fatal(err)
	}
	if hub.SpokeStartsForTest(r.Op, chat.ID, hub.VanillaApp) {
		t.Fatal("a spoke started after the operator closed")
	}
}
