package tui

import (
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// TestSetupAnAppsOwnModelNamesItsKey: a model the config gives one app
// (apps.NAME.model) that is not installed is fixed by that key or by a
// pull, never by --model or /model, which leave an app's own model as it
// is: the panel offers the key (and the pull), not them. Each fix it
// offers works: the model pulled elsewhere, ctrl+r finds it; the key set
// to an installed model, bulkhead starts with no panel. --model (the
// spokes' model) does not.
func TestSetupAnAppsOwnModelNamesItsKey(t *testing.T) {
	t.Parallel()
	const own = "calc-model"
	const file = "/home/user/.config/bulkhead/config.yaml"
	r := newRig(t, replies(ollamatest.Text("x")))
	reg, err := apps.NewRegistry(apps.Default(), calc.New())
	if err != nil {
		t.Fatal(err)
	}
	installed := func() *fakeOllama {
		return &fakeOllama{up: true, pullErr: offlinePull, models: map[string][]string{
			hubModel: {llm.CapCompletion, llm.CapTools}, spokeModel: {llm.CapCompletion, llm.CapTools}, "qwen2.5:0.5b": {llm.CapCompletion, llm.CapTools},
		}}
	}
	withModel := func(f *fakeOllama, model string) Options {
		opts := setupOptions(r, f, "")
		opts.Registry = reg
		opts.Models = newFakeModels()
		opts.AppModel = func(app string) string {
			if app == "calc" {
				return model
			}
			return ""
		}
		opts.AppModelKey = func(app string) string { return "apps." + app + ".model" }
		return opts
	}

	f := installed()
	d := newDriver(t, withModel(f, own), 120, 40)
	mustShow(t, unboxed(d.view()), "Model missing", own+" is not installed.", "it is the model of calc's spoke")
	d.arm()
	d.key(char('y')) // offline: the pull fails
	d.idle()
	v := d.view()
	mustShow(t, v, "⚠ "+own+" is not installed — the model of calc's spoke",
		"Installed models that can call tools: hub-model, qwen2.5:0.5b, spoke-model",
		"For calc's spoke: set apps.calc.model in "+file+" to one of them, or remove it to use the spokes' model, then start bulkhead again (--model and /model do not change an app's own model)",
		"Or pull it yourself (ollama pull "+own+"): this screen notices.",
		"esc or a query goes to the chat")
	mustNotShow(t, v, "bulkhead --model NAME", "/model NAME")

	// The pull, run elsewhere: ctrl+r finds the model, and the panel goes.
	f.mu.Lock()
	f.models[own] = []string{llm.CapCompletion, llm.CapTools}
	f.mu.Unlock()
	d.key(ctrl('r'))
	d.idle()
	mustNotShow(t, d.view(), "is not installed")
	mustShow(t, d.view(), "the answer streams here")

	// The key set to an installed model: bulkhead starts with no panel.
	d = newDriver(t, withModel(installed(), "qwen2.5:0.5b"), 120, 40)
	mustNotShow(t, d.view(), "is not installed", "Model missing")
	mustShow(t, d.view(), "the answer streams here")

	// --model (the hub's and the spokes' model) leaves the app's own
	// model missing.
	opts := withModel(installed(), own)
	fm := newFakeModels()
	fm.hub, fm.spoke = "qwen2.5:0.5b", "qwen2.5:0.5b"
	opts.Models, opts.SpokeModel = fm, "qwen2.5:0.5b"
	d = newDriver(t, opts, 120, 40)
	mustShow(t, unboxed(d.view()), own+" is not installed.")
}
