package hub_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// netApp is an app whose process needs an endpoint: each call asks for
// it as an out-of-process app's start does (apps.Network on the call's
// context), and records the answer.
type netApp struct {
	endpoint string
	mu       sync.Mutex
	answers  []bool
}

func (a *netApp) Manifest() apps.Manifest {
	return apps.Manifest{Name: "forecaster", Description: "Forecasts.", Hosts: []string{a.endpoint},
		Functions: []apps.Function{{Name: "forecast", Description: "Forecast.", Effect: apps.EffectRead,
			Params: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
			Result: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)}},
		Provides: map[string]string{"weather.forecast": "forecast"}}
}

func (a *netApp) Call(ctx context.Context, _ apps.Call) (json.RawMessage, error) {
	ok := false
	if n := apps.NetworkOf(ctx); n != nil {
		_, ok = n.AllowNetwork(ctx, "forecaster", a.endpoint)
	}
	a.mu.Lock()
	a.answers = append(a.answers, ok)
	a.mu.Unlock()
	return json.RawMessage(`{"summary":"sunny"}`), nil
}

func (a *netApp) last() (bool, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.answers) == 0 {
		return false, 0
	}
	return a.answers[len(a.answers)-1], len(a.answers)
}

func forecastScript() ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{step("s1", "weather.forecast", "the weather in Oslo")}})
		}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return ollamatest.Text("Sunny in Oslo.")
			}
		}
		a := api.NewToolCallFunctionArguments()
		a.Set("city", "Oslo")
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "forecast", Arguments: a}}}}
	}
}

func networkCalls(p *permissionstest.Prompter) []permissions.Request {
	var out []permissions.Request
	for _, r := range p.Calls() {
		if r.Kind == permissions.KindNetwork {
			out = append(out, r)
		}
	}
	return out
}

// An endpoint an app's process would reach is a permission of the
// network kind: put to the user with the app, the host and the port and
// the hub's warning, never routine; a permanent answer is a grant that
// decides the next start without a dialog, is listed, and once revoked
// the next start asks again.
func TestNetworkEndpointsArePermissions(t *testing.T) {
	t.Parallel()
	app := &netApp{endpoint: "api.example.com:443"}
	p := permissionstest.NewPrompter(permissions.AnswerPermanent)
	rig := hubtest.New(t, hubtest.Config{Script: forecastScript(), Apps: []apps.App{app}, Catalog: attackCatalog(t), Prompter: p, Rules: allowExec})
	chat, _ := rig.Op.NewChat(false)
	ask := func() []hub.Event {
		_, evs := askWithin(t, rig.Op, chat.ID, "what is the weather in Oslo?", 20*time.Second)
		return evs
	}
	evs := ask()
	calls := networkCalls(p)
	if len(calls) != 1 {
		t.Fatalf("network dialogs: %+v", calls)
	}
	r := calls[0]
	if r.Subject != "forecaster" || r.Object != "api.example.com:443" || !strings.Contains(r.Warning, "api.example.com (port 443)") ||
		!strings.Contains(r.Warning, "cannot see what it sends") || !slices.Contains(r.Concerns, permissions.ConcernNetwork) || r.Routine() {
		t.Fatalf("the network dialog: %+v", r)
	}
	if ok, _ := app.last(); !ok {
		t.Fatal("the allowed endpoint was not given to the app")
	}
	if !slices.ContainsFunc(evs, func(e hub.Event) bool {
		return e.Kind == hub.EventPermission && e.Permission.Kind == permissions.KindNetwork
	}) {
		t.Fatal("the turn's events must carry the network permission")
	}
	var grant permissions.Grant
	for _, g := range rig.Broker.Grants() {
		if g.Kind == permissions.KindNetwork {
			grant = g
		}
	}
	if grant.ID == "" || grant.Subject != "forecaster" || grant.Object != "api.example.com:443" || !grant.Permanent {
		t.Fatalf("no permanent network grant: %+v", rig.Broker.Grants())
	}

	ask()
	if n := len(networkCalls(p)); n != 1 {
		t.Fatalf("the grant must decide the next start: %d dialogs", n)
	}
	if ok, n := app.last(); !ok || n != 2 {
		t.Fatalf("second start: allowed %v after %d calls", ok, n)
	}

	if err := rig.Broker.Revoke(grant.ID); err != nil {
		t.Fatal(err)
	}
	p.Answer = permissions.AnswerDeny
	ask()
	if n := len(networkCalls(p)); n != 2 {
		t.Fatalf("a revoked grant must be asked again: %d dialogs", n)
	}
	if ok, _ := app.last(); ok {
		t.Fatal("a denied endpoint reached the app")
	}
}

// The policy for scripts that passes what is expected and routine
// (--on-prompt=expected) never opens the network.
func TestNetworkIsNeverRoutine(t *testing.T) {
	t.Parallel()
	app := &netApp{endpoint: "127.0.0.1:8080"}
	rig := hubtest.New(t, hubtest.Config{Script: forecastScript(), Apps: []apps.App{app}, Catalog: attackCatalog(t),
		Prompter: permissions.Policy{Answer: permissions.AnswerSession, RoutineOnly: true}, Rules: allowExec})
	chat, _ := rig.Op.NewChat(false)
	askWithin(t, rig.Op, chat.ID, "what is the weather in Oslo?", 20*time.Second)
	if ok, n := app.last(); ok || n != 1 {
		t.Fatalf("the expected-only policy allowed the network (%v, %d calls)", ok, n)
	}
}

// leasingApp holds the lease of its endpoint as an MCP instance does:
// its "process" keeps the access while the lease serves the call, and
// is stopped when the lease ends.
type leasingApp struct {
	netApp
	mu2     sync.Mutex
	lease   apps.Lease
	release func()
	stops   int
	answers []string // "warm" (the running process served it) or "asked"
}

func (a *leasingApp) Call(ctx context.Context, _ apps.Call) (json.RawMessage, error) {
	a.mu2.Lock()
	warm := a.lease != nil && !a.lease.Ended() && a.lease.For(ctx)
	a.mu2.Unlock()
	if warm {
		a.mu2.Lock()
		a.answers = append(a.answers, "warm")
		a.mu2.Unlock()
		return json.RawMessage(`{"summary":"sunny"}`), nil
	}
	l, ok := apps.NetworkOf(ctx).AllowNetwork(ctx, "forecaster", a.endpoint)
	a.mu2.Lock()
	defer a.mu2.Unlock()
	a.answers = append(a.answers, "asked")
	if a.release != nil {
		a.release() // the process that held the old access is stopped
		a.release = nil
	}
	if ok {
		a.lease = l
		a.release = l.Hold("forecaster", func() {
			a.mu2.Lock()
			a.stops++
			a.mu2.Unlock()
		})
	}
	return json.RawMessage(`{"summary":"sunny"}`), nil
}

func (a *leasingApp) state() (string, int) {
	a.mu2.Lock()
	defer a.mu2.Unlock()
	return strings.Join(a.answers, ","), a.stops
}

// The hub gives an app's process the lease of each network answer, bound
// to what allowed it: a once answer serves the session that gave it
// (another session's turn is asked again, and is not served by the
// running process), and ends — stopping the process — when that session
// ends; a permanent grant's ends when it is revoked, and the revoke says
// which app it stopped.
func TestNetworkAnswersAreLeased(t *testing.T) {
	t.Parallel()
	app := &leasingApp{netApp: netApp{endpoint: "api.example.com:443"}}
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	rig := hubtest.New(t, hubtest.Config{Script: forecastScript(), Apps: []apps.App{app}, Catalog: attackCatalog(t), Prompter: p, Rules: allowExec})
	chat, _ := rig.Op.NewChat(false)
	ask := func(session string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(permissions.WithSession(context.Background(), session), 20*time.Second)
		defer cancel()
		if _, err := rig.Op.Ask(ctx, chat.ID, "what is the weather in Oslo?", func(hub.Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	ask("a")
	ask("a")
	ask("b")
	if got, stops := app.state(); got != "asked,warm,asked" || stops != 0 || len(networkCalls(p)) != 2 {
		t.Fatalf("session b must be asked, not served by a's process: %s (%d stops, %d dialogs)", got, stops, len(networkCalls(p)))
	}
	rig.Broker.EndSession("a")
	if _, stops := app.state(); stops != 0 {
		t.Fatalf("a's end stopped b's access: %d", stops)
	}
	rig.Broker.EndSession("b")
	if _, stops := app.state(); stops != 1 {
		t.Fatalf("b's end must stop the process that holds its answer: %d stops", stops)
	}

	p.Answer = permissions.AnswerPermanent
	ask("c")
	var grant string
	for _, g := range rig.Broker.Grants() {
		if g.Kind == permissions.KindNetwork {
			grant = g.ID
		}
	}
	rig.Broker.EndSession("c")
	if _, stops := app.state(); stops != 1 {
		t.Fatal("a permanent grant's access does not end with a session")
	}
	r, err := rig.Broker.RevokeReport(grant)
	if _, stops := app.state(); err != nil || stops != 2 || !slices.Equal(r.Stopped, []string{"forecaster"}) {
		t.Fatalf("the revoke must stop it and say so: %+v %v", r, err)
	}
}
