package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// monolithApp is the one spoke of the --vanilla baseline.
const monolithApp = "monolith"

// Names that events and plans carry for work no installed app does: the
// --vanilla baseline's one spoke (MonolithApp) and the synthesis that
// writes a multi-app answer from the apps' results (SynthesisApp). With
// VanillaApp — a plain answer from the model, no app — a screen shows
// them in words of its own.
const (
	MonolithApp  = monolithApp
	SynthesisApp = "synthesis"
)

// vanillaPlan is the baseline's plan: no planner, one context for all.
func vanillaPlan() Plan {
	return Plan{Steps: []Step{{ID: "s1", Functionality: "*", App: monolithApp, DependsOn: []string{}}}, Reason: "vanilla baseline: no isolation"}
}

// monolith is the UNSAFE baseline: every installed app's description and
// functions in one context, one memory, nothing asked. Functions are named
// <app>__<function>. It exists so that every attack can be shown to bite.
type monolith struct {
	reg *apps.Registry
	st  *memory.Store
	m   apps.Manifest
}

func newMonolith(reg *apps.Registry, st *memory.Store) *monolith {
	mono := &monolith{reg: reg, st: st}
	mono.m = apps.Manifest{Name: monolithApp, Provides: map[string]string{}}
	var desc []string
	if reg != nil {
		for _, name := range reg.Names() {
			a, _ := reg.App(name)
			m := a.Manifest()
			desc = append(desc, fmt.Sprintf("App %s: %s", name, m.Description))
			for _, f := range m.Functions {
				f.Name = name + "__" + f.Name
				mono.m.Functions = append(mono.m.Functions, f)
			}
		}
	}
	mono.m.Description = "You can use every installed app.\n" + strings.Join(desc, "\n")
	return mono
}

func (m *monolith) Manifest() apps.Manifest { return m.m }

func (m *monolith) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	app, fn, ok := strings.Cut(c.Function, "__")
	if !ok {
		return nil, fmt.Errorf("no function %q", c.Function)
	}
	a, ok := m.reg.App(app)
	if !ok {
		return nil, fmt.Errorf("no app %q", app)
	}
	ns, err := m.st.Namespace(SpokeOwner(app))
	if err != nil {
		return nil, err
	}
	return a.Call(ctx, apps.Call{Function: fn, Args: c.Args, Memory: ns, NotFound: memory.ErrNotFound})
}

// openGate allows everything: the baseline has no dialogs. Every call it
// lets through goes to the action log (decided by "vanilla"), so that
// the log shows what the baseline did.
type openGate struct {
	broker  *permissions.Broker
	changes *changes.Store
}

// vanillaWarning is what the action log says of every baseline call.
const vanillaWarning = "--vanilla: the unsafe baseline runs every call without a dialog"

func (g openGate) Authorize(ctx context.Context, f apps.Function, args json.RawMessage) (spokes.Verdict, error) {
	if g.broker == nil {
		return spokes.Verdict{Allowed: true}, nil
	}
	app, fn, _ := strings.Cut(f.Name, "__")
	r := permissions.Request{Kind: permissions.KindExec, Subject: "vanilla", Object: app, Function: app + "." + fn, Args: args,
		Detail: "ran " + app + "." + fn + " with no dialog", Warning: vanillaWarning, Irreversible: f.Effect == apps.EffectIrreversible,
		Chat: permissions.ChatOf(ctx)}
	if r.Irreversible {
		r.Kind = permissions.KindIrreversible
	}
	// The call runs whatever the log says: the baseline is meant to show
	// what happens without the hub. A log that cannot be written stops it.
	if _, err := g.broker.Record(r, permissions.Decision{Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourceVanilla, Note: vanillaWarning}); err != nil {
		return spokes.Verdict{}, fmt.Errorf("log the call: %w", err)
	}
	return spokes.Verdict{Allowed: true}, nil
}

func (openGate) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("every app's functions are already available")
}
