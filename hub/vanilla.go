package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// monolithApp is the one spoke of the --vanilla baseline.
const monolithApp = "monolith"

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
	ns, err := m.st.Namespace("spoke/" + app)
	if err != nil {
		return nil, err
	}
	return a.Call(ctx, apps.Call{Function: fn, Args: c.Args, Memory: ns, NotFound: memory.ErrNotFound})
}

// openGate allows everything: the baseline has no dialogs.
type openGate struct{}

func (openGate) Authorize(context.Context, apps.Function, json.RawMessage) (spokes.Verdict, error) {
	return spokes.Verdict{Allowed: true}, nil
}

func (openGate) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("every app's functions are already available")
}
