package engine

import (
	"fmt"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// What a serving process and the sessions of its clients agree on.
//
// A session chooses for itself its folder and apps (ProfileSpec) and its
// models and Ollama host (Models): they travel with its hello, and two
// sessions of one process may differ in all of them. Of the rest of the
// configuration (Settings), the serving process applies what it can
// while it runs (Apply: MCP servers, permission rules, history, memory,
// limits, drafts, apps' own models and hosts) when its config file
// changes; what only a new serving process can take (RestartOnly) is
// named, with what to do, to a client whose file says otherwise.

// RestartOnly names the settings a running serving process keeps: they
// were fixed when it started.
var RestartOnly = map[string]bool{"data_dir": true, "cache_dir": true, "limits.log_mb": true}

// Settings are cfg's settings by key, less what a session chooses for
// itself and what only a client shows (theme, mouse, accessible).
func Settings(cfg config.Config) map[string]any {
	model := cfg.Limits
	model.LogMB = 0
	return map[string]any{
		"data_dir":          cfg.DataDir,
		"cache_dir":         cfg.CacheDir,
		"ollama.keep_alive": cfg.Ollama.KeepAlive,
		"ollama.num_ctx":    cfg.Ollama.NumCtx,
		"hub.history":       cfg.Hub.History,
		"spokes.history":    cfg.Spokes.History,
		"hub.draft":         cfg.Draft,
		"apps":              cfg.Apps,
		"permissions.rules": cfg.Rules,
		"mcp":               cfg.MCP,
		"memory":            cfg.Memory,
		"limits":            model,
		"limits.log_mb":     cfg.Limits.LogMB,
	}
}

// Applied is what a process started with start runs with once it has
// applied next: next's settings but those it keeps (RestartOnly), and
// start's session defaults.
func Applied(start, next config.Config) config.Config {
	out := start
	out.Ollama.KeepAlive, out.Ollama.NumCtx = next.Ollama.KeepAlive, next.Ollama.NumCtx
	out.Hub.History, out.Spokes.History, out.Draft = next.Hub.History, next.Spokes.History, next.Draft
	out.Apps, out.Rules, out.MCP, out.Memory = next.Apps, next.Rules, next.MCP, next.Memory
	logMB := start.Limits.LogMB
	out.Limits = next.Limits
	out.Limits.LogMB = logMB
	return out
}

// Apply makes next's settings the engine's from now on (Applied): a
// session that starts after it gets a profile built with them; the
// permission rules and the models' settings change at once; the MCP
// servers whose entries changed are stopped and start again as next
// says (ReloadMCP); what an allow rule that next lacks allowed ends
// (permissions.Broker.SetRules), and the network a config that did not
// load stopped (LoadFailed) is as next says again. Sessions open keep
// their profile — but for their apps: the serving process moves a
// session that takes them from the config file to the file's enable
// list once that changed (ProfileSpec.Configured). Nothing changes when
// next's rules are not valid.
func (e *Engine) Apply(next config.Config) error {
	next = Applied(e.settings(), next)
	rules := brokerRules(next.Rules)
	if err := permissions.ValidateRules(rules); err != nil {
		return fmt.Errorf("%w: permission rules: %v", config.ErrInvalid, err)
	}
	if err := e.models.setSettings(next); err != nil {
		return err
	}
	if err := e.Broker.SetRules(rules); err != nil {
		return err
	}
	e.pmu.Lock()
	e.cur = next
	e.gen++
	e.unloaded = nil
	e.pmu.Unlock()
	e.ReloadMCP(next)
	e.Log.Info("the config file changed: its settings apply to sessions from now on")
	return nil
}

// settings are the engine's settings now (Apply).
func (e *Engine) settings() config.Config {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	return e.cur
}

// brokerRules are the config's rules as the broker takes them.
func brokerRules(rs []config.Rule) []permissions.Rule {
	rules := make([]permissions.Rule, len(rs))
	for i, r := range rs {
		rules[i] = permissions.Rule{Effect: permissions.Effect(r.Effect), Kind: r.Kind, Subject: r.Subject, Object: r.Object, Function: r.Function, Where: r.Where}
	}
	return rules
}
