package hub_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/ollama/ollama/api"
)

// After every memory upkeep that wrote a summary, the hub has the model
// server read the prompt the next turn will begin with: the warm call's
// prompt is the start of the next turn's, whole — for the planner (its
// user message up to the request) and for the plain spoke (its messages
// but the request) — so the next turn reads only its own request.
func TestTheUpkeepWarmsTheNextTurnsPrompt(t *testing.T) {
	t.Parallel()
	r := hubtest.New(t, hubtest.Config{Script: upkeepScript, Modify: func(o *hub.Options) {
		o.Memory = hub.MemoryOptions{Enabled: true, Every: 1}
	}})
	hub.NoTriageForTest(r.Op)
	chat, _ := r.Op.NewChat(false)
	queries := []string{"Tell me about the sea", "And the tides?", "Why is it blue?"}
	for _, q := range queries {
		if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.Op.FlushMemory(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	reqs := r.Srv.Requests()
	var planWarm, spokeWarm int
	for i, req := range reqs {
		if !hub.IsWarm(&req) {
			continue
		}
		// the next call of the same kind that is no upkeep and no warm
		for _, next := range reqs[i+1:] {
			if hub.IsWarm(&next) || hub.UpkeepTask(&next) != "" || (len(next.Format) > 0) != (len(req.Format) > 0) {
				continue
			}
			if len(req.Format) > 0 {
				planWarm++
				if !strings.HasPrefix(next.Messages[1].Content, req.Messages[1].Content) || !strings.HasSuffix(req.Messages[1].Content, "Request: ") {
					t.Errorf("the planner's warm prompt is not the start of the next plan's:\n%s\n---\n%s", req.Messages[1].Content, next.Messages[1].Content)
				}
			} else {
				spokeWarm++
				if len(next.Messages) != len(req.Messages)+1 {
					t.Errorf("the spoke's warm has %d messages, the next answer %d", len(req.Messages), len(next.Messages))
					break
				}
				for k, m := range req.Messages {
					if next.Messages[k].Content != m.Content || next.Messages[k].Role != m.Role {
						t.Errorf("message %d of the warm differs from the next answer's: %q vs %q", k, m.Content, next.Messages[k].Content)
					}
				}
				if !strings.Contains(req.Messages[1].Content, "The user talks about the sea") {
					t.Errorf("the warm does not hold the new summary: %+v", req.Messages)
				}
			}
			break
		}
	}
	if planWarm < len(queries)-1 || spokeWarm < len(queries)-1 {
		t.Errorf("warms followed by their turn: %d of the planner, %d of the spoke; want %d each", planWarm, spokeWarm, len(queries)-1)
	}
}

// A chat just opened has the server read the planner's prompt before the
// person asks (Operator.Warm, which a client calls as a chat opens): the
// warm's prompt is the start of the first plan's. A request made while it
// is still read waits for it, and its plan is sent once the warm ends —
// not beside it, reading the same prefix twice. The warm is held by a gate
// the test opens once the turn waits.
func TestAnOpenedChatReadsThePlannersPromptAhead(t *testing.T) {
	t.Parallel()
	gate, arrived := make(chan struct{}), make(chan struct{})
	var arrivedOnce sync.Once
	var gateOpen atomic.Bool
	planned := make(chan bool, 8) // per plan: was the warm over?
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if hub.IsWarm(req) {
			arrivedOnce.Do(func() { close(arrived) })
			<-gate
			return ollamatest.JSON(map[string]any{})
		}
		if len(req.Format) > 0 && hub.UpkeepTask(req) == "" {
			planned <- gateOpen.Load()
		}
		return upkeepScript(req)
	}
	r := hubtest.New(t, hubtest.Config{Script: script})
	var opened sync.Once
	open := func() { opened.Do(func() { gateOpen.Store(true); close(gate) }) }
	t.Cleanup(open) // before the server closes, on a failure too
	hub.NoTriageForTest(r.Op)
	waiting := make(chan struct{})
	var waitOnce sync.Once
	hub.OnWarmWaitForTest(r.Op, func() { waitOnce.Do(func() { close(waiting) }) })
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		r.Op.Warm(context.Background(), "")
	}()
	<-arrived
	chat, _ := r.Op.NewChat(false)
	asked := make(chan error, 1)
	go func() {
		_, err := r.Op.Ask(context.Background(), chat.ID, "Tell me about the sea", nil)
		asked <- err
	}()
	select {
	case <-waiting:
	case over := <-planned:
		t.Fatalf("the plan was sent while the warm was read (warm over: %v)", over)
	case err := <-asked:
		t.Fatalf("the turn ended while the warm was read: %v", err)
	}
	open()
	<-warmed
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	if over := <-planned; !over {
		t.Error("the plan was sent before the warm ended")
	}
	var warm, plan *api.ChatRequest
	for _, req := range r.Srv.Requests() {
		switch {
		case hub.IsWarm(&req):
			warm = &req
		case len(req.Format) > 0 && hub.UpkeepTask(&req) == "" && plan == nil:
			plan = &req
		}
	}
	if warm == nil || plan == nil {
		t.Fatalf("warm %v, plan %v", warm != nil, plan != nil)
	}
	if warm.Messages[0].Content != plan.Messages[0].Content || !strings.HasPrefix(plan.Messages[1].Content, warm.Messages[1].Content) || !strings.HasSuffix(warm.Messages[1].Content, "Request: ") {
		t.Errorf("the warm's prompt is not the start of the first plan's:\n%s\n---\n%s", warm.Messages[1].Content, plan.Messages[1].Content)
	}
}

// What every chat shares comes first in the planner's prompt — the
// instructions, the catalog, the facts the hub holds (one list for
// every chat), the requests' heading — and a chat's own summary after
// them: a new chat's first plan finds all but its request cached from
// another chat's plan, and all of it from the warm a client sends as a
// chat opens (which names the facts too).
func TestANewChatsPlanContinuesAnotherChatsPrompt(t *testing.T) {
	t.Parallel()
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if strings.HasPrefix(hub.UpkeepTask(req), hub.ExtractMarker) {
			return ollamatest.JSON(map[string]any{"entities": []map[string]string{{"key": "topic", "value": "the sea"}}})
		}
		return upkeepScript(req)
	}
	r := hubtest.New(t, hubtest.Config{Script: script, Modify: func(o *hub.Options) {
		o.Memory = hub.MemoryOptions{Enabled: true, Every: 1}
	}})
	hub.NoTriageForTest(r.Op)
	ctx := context.Background()
	a, _ := r.Op.NewChat(false)
	for _, q := range []string{"Tell me about the sea", "And the tides?"} {
		if _, err := r.Op.Ask(ctx, a.ID, q, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.Op.FlushMemory(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r.Op.Warm(ctx, "")
	b, _ := r.Op.NewChat(false)
	const q = "Why is it blue?"
	if _, err := r.Op.Ask(ctx, b.ID, q, nil); err != nil {
		t.Fatal(err)
	}
	var plans []string
	var warm string
	for _, req := range r.Srv.Requests() {
		switch {
		case len(req.Format) == 0 || hub.UpkeepTask(&req) != "":
		case hub.IsWarm(&req):
			warm = req.Messages[1].Content
		default:
			plans = append(plans, req.Messages[1].Content)
		}
	}
	if len(plans) != 3 || warm == "" {
		t.Fatalf("%d plans, warm %v", len(plans), warm != "")
	}
	other, first := plans[1], strings.TrimSuffix(plans[2], "\n")
	if !strings.Contains(other, "The user talks about the sea.") || !strings.Contains(other, "topic") {
		t.Fatalf("the other chat's plan holds no summary or fact:\n%s", other)
	}
	n := 0
	for n < min(len(other), len(first)) && other[n] == first[n] {
		n++
	}
	if rest := first[n:]; rest != "Request: "+q {
		t.Fatalf("a new chat's plan reads again %q after what it shares with another chat's, want its request alone", rest)
	}
	if first != warm+q {
		t.Fatalf("the warm as a chat opens is not the new chat's plan but its request:\n%s\n---\n%s", warm, first)
	}
}

// On a server that runs one request at a time (one slot), a chat turn
// begins with the triage in the plain spoke's context, not with the
// planner's prompt: the upkeep between turns ends by having the server
// read that context, so the next turn's triage and draft find the whole
// conversation cached in the one slot and read only the request. Before,
// the hub's upkeep ended by warming the planner's prompt, which took the
// slot: the turn after every upkeep read its conversation cold.
func TestOneSlotsUpkeepLeavesTheConversationCached(t *testing.T) {
	t.Parallel()
	// Taken as serial, or its order not learned with the probes spent
	// (as a one-slot server can leave it: the runs at a person's pace).
	for _, serial := range []bool{true, false} {
		t.Run(map[bool]string{true: "serial", false: "probes spent"}[serial], func(t *testing.T) {
			t.Parallel()
			oneSlotUpkeep(t, serial)
		})
	}
}

func oneSlotUpkeep(t *testing.T, serial bool) {
	r := hubtest.New(t, hubtest.Config{Script: upkeepScript, Modify: func(o *hub.Options) {
		o.Draft = true
		o.Memory = hub.MemoryOptions{Enabled: true, Every: 1}
	}})
	r.Srv.Slotted(ollamatest.SlotModel{Slots: 1})
	if serial {
		hub.SetSerialForTest(r.Op)
	} else {
		hub.SetProbesForTest(r.Op, hub.DraftProbes)
	}
	if hub.SerialNowForTest(r.Op) != serial || hub.SideBySideForTest(r.Op) {
		t.Fatal("the server's order is not the case's: the test proves nothing")
	}
	chat, _ := r.Op.NewChat(false)
	queries := []string{"Tell me about the sea", "And the tides?", "Why is it blue?", "Is it cold?"}
	for _, q := range queries {
		if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.Op.FlushMemory(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	triages, upkeeps := 0, 0
	for i, u := range r.Srv.SlotUses() {
		if hub.UpkeepTask(&u.Request) != "" {
			upkeeps++
		}
		if !hub.IsTriage(&u.Request) {
			continue
		}
		if triages++; triages == 1 {
			continue // the chat's first: nothing of it read yet
		}
		// Its prompt is the plain spoke's context, the request, and
		// the hub's question: all but the last two were read ahead.
		msgs := u.Request.Messages
		ahead := len(ollamatest.PromptTokens(&api.ChatRequest{Messages: msgs[:len(msgs)-2]}))
		if u.Cached < ahead {
			t.Errorf("triage %d (use %d) found %d tokens cached, the conversation before its request is %d: read cold after the upkeep", triages, i, u.Cached, ahead)
		}
	}
	if triages != len(queries) || upkeeps < 2*(len(queries)-1) {
		t.Fatalf("%d triages, %d upkeep calls: the test proves nothing", triages, upkeeps)
	}
}

// A planner's prompt read cold on a server with parallel slots takes the
// free slot sharing the most with it: every slot that holds a prompt
// shares the template's first token, an empty one nothing. Where no
// other slot holds the conversation, the next draft would take the
// planner's slot for the same reason, and the plan after it read the
// planner's prompt cold again. So while the cold planner's prompt is
// read (here, the warm while the person is idle after a cold first
// turn), the hub has the plain spoke's prompt read beside it: it takes
// another slot. The next turn's draft finds its conversation there and
// its plan the planner's prompt in its own slot. The slots are empty
// when the warm comes (the model loaded anew); the planner's warm is held
// by a gate the plain spoke's read opens (bounded, for the failure).
func TestAColdPlannersReadKeepsTheConversationBesideIt(t *testing.T) {
	t.Parallel()
	spokeRead := make(chan struct{})
	var spokeOnce sync.Once
	var held atomic.Bool
	script := func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case hub.IsWarm(req) && len(req.Format) > 0:
			select {
			case <-spokeRead:
				held.Store(true)
			case <-time.After(5 * time.Second):
			}
			return ollamatest.JSON(map[string]any{})
		case hub.IsWarm(req):
			spokeOnce.Do(func() { close(spokeRead) })
		case hub.IsTriage(req):
			return ollamatest.JSON("chat")
		}
		return upkeepScript(req)
	}
	r := hubtest.New(t, hubtest.Config{Script: script, Modify: func(o *hub.Options) {
		o.Draft = true
		o.Memory = hub.MemoryOptions{Enabled: true, Every: 4}
	}})
	hub.SetSideBySideForTest(r.Op, true)
	ctx := context.Background()
	chat, _ := r.Op.NewChat(false)
	turn, err := r.Op.Ask(ctx, chat.ID, "Tell me about the sea", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !turn.Plan.Triaged {
		t.Fatalf("the cold first turn was not triaged: %+v", turn.Plan)
	}
	// The model loaded anew: every slot empty.
	r.Srv.Slotted(ollamatest.SlotModel{Slots: 3})
	if err := r.Op.WaitMemory(ctx); err != nil { // the person is idle
		t.Fatal(err)
	}
	if !held.Load() {
		t.Error("the planner's cold read ended with no read of the conversation beside it")
	}
	if _, err := r.Op.Ask(ctx, chat.ID, "And the tides?", nil); err != nil {
		t.Fatal(err)
	}
	uses := r.Srv.SlotUses()
	prefix := 0 // the planner's warm prompt, its format apart
	for _, u := range uses {
		if hub.IsWarm(&u.Request) && len(u.Request.Format) > 0 {
			prefix = len(ollamatest.PromptTokens(&api.ChatRequest{Messages: u.Request.Messages}))
		}
	}
	var plans, drafts int
	for i, u := range uses {
		switch {
		case hub.IsWarm(&u.Request) || hub.UpkeepTask(&u.Request) != "":
		case len(u.Request.Format) > 0:
			plans++
			if u.Cached < prefix {
				t.Errorf("the plan (use %d) found %d tokens cached in slot %d, the planner's prefix is %d: read cold again", i, u.Cached, u.Slot, prefix)
			}
		default:
			drafts++
			if u.Evicted >= prefix {
				t.Errorf("the draft (use %d) took slot %d, evicting %d tokens: the planner's", i, u.Slot, u.Evicted)
			}
		}
	}
	if plans != 1 || drafts != 1 || prefix < 50 {
		t.Fatalf("%d plans, %d drafts after the warm, prefix %d: the test proves nothing", plans, drafts, prefix)
	}
}
