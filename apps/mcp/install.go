package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// install builds the app from a listing and checks it against cat. A
// panic (the listing may come from a file) is an error.
func (a *App) install(l listing, cat *apps.Catalog) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mcp %s: building the app: %v", a.name, r)
		}
	}()
	b, err := a.build(l)
	if err != nil {
		return fmt.Errorf("mcp %s: %w", a.name, err)
	}
	withOwn, err := cat.With(b.own...)
	if err != nil {
		return fmt.Errorf("mcp %s: %w", a.name, err)
	}
	if err := b.manifest.Check(withOwn); err != nil {
		return err
	}
	a.built, a.listed = b, l
	return nil
}

// Own lists the functionalities of the app's own tools (<app>.<function>),
// to be added to the catalog its registry checks it against.
func (a *App) Own() []apps.Functionality {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.built.own)
}

// ownDescription is the hub's description of a tool's own functionality:
// from names alone, which are [a-z0-9_], never the server's prose.
func ownDescription(app, fn string, effect apps.Effect, params json.RawMessage) string {
	var what string
	switch effect {
	case apps.EffectRead:
		what = "it only reads"
	case apps.EffectWrite:
		what = "it changes things"
	default:
		what = "it may do what cannot be undone"
	}
	d := fmt.Sprintf("The %s tool of the MCP app %s (%s).", strings.ReplaceAll(fn, "_", " "), app, what)
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(params, &schema)
	var args []string
	for _, k := range slices.Sorted(maps.Keys(schema.Properties)) {
		args = append(args, FunctionName(k))
	}
	slices.Sort(args)
	args = slices.Compact(args)
	if len(args) > 12 {
		args = append(args[:12], "…")
	}
	if len(args) > 0 {
		d += " Arguments: " + strings.Join(args, ", ") + "."
	}
	return d
}

// build makes the app from a listing and the config.
func (a *App) build(l listing) (built, error) {
	m := apps.Manifest{Name: a.name, Provides: map[string]string{}, Model: a.cfg.Model}
	desc := "An MCP server."
	if l.Server != "" || l.Version != "" {
		desc = fmt.Sprintf("The MCP server %s.", l.String())
	}
	if l.Instructions != "" {
		desc += "\n" + clip(l.Instructions, 4000)
	}
	m.Description = desc
	b := built{tools: map[string]tool{}}
	taken := map[string]bool{}
	used := map[string]bool{}
	var errs []error
	// offer makes a function of what the server offers (a tool, or its
	// resources), configured as the tool named name is (unless that
	// name is a tool's already).
	offer := func(name, desc string, annotated apps.Effect, open bool, params, res json.RawMessage, t tool) {
		var key string
		var tc ToolConfig
		clash := t.kind != callTool && taken[name]
		fn := uniqueName(name, taken)
		if !clash {
			key, tc = a.toolConfig(name, fn)
		}
		if key != "" {
			used[key] = true
		}
		effect, err := tighten(annotated, tc.Effect)
		if err != nil {
			errs = append(errs, fmt.Errorf("tools.%s: %w", name, err))
			return
		}
		m.Functions = append(m.Functions, apps.Function{Name: fn, Description: clip(desc, 2000), Params: params, Result: res, Effect: effect, Key: tc.Key})
		b.tools[fn] = t
		provides := tc.Functionality
		switch provides {
		case "none":
			provides = ""
		case "":
			provides = a.name + "." + fn
			b.own = append(b.own, apps.Functionality{Name: provides, Description: ownDescription(a.name, fn, effect, params),
				Request: params, Response: res, Effect: effect, Key: tc.Key})
		}
		if provides != "" {
			m.Provides[provides] = fn
		}
		b.info = append(b.info, ToolInfo{Tool: name, Function: fn, Effect: effect, Annotated: annotated, OpenWorld: open, Functionality: provides})
	}
	for _, t := range l.Tools {
		if t.requiresTasks() {
			// It runs only as a task, which bulkhead does not support:
			// no function, no functionality; `bulkhead mcp list` says so.
			if key, _ := a.toolConfig(t.Name, FunctionName(t.Name)); key != "" {
				used[key] = true
			}
			continue
		}
		annotated, open := EffectOf(t.Annotations.sdk())
		params, err := safeSchema(decoded(t.InputSchema), true)
		if err != nil {
			a.log.Warn("unusable input schema; the tool takes any object", "tool", t.Name, "err", err)
			params = permissiveObject
		}
		res, structured := TextResult, len(t.OutputSchema) > 0
		if structured {
			if res, err = safeSchema(decoded(t.OutputSchema), false); err != nil {
				a.log.Warn("unusable output schema; results are only checked to be objects", "tool", t.Name, "err", err)
				res = permissiveObject
			}
		}
		offer(t.Name, t.Description, annotated, open, params, res, tool{name: t.Name, structured: structured})
	}
	if l.Resources {
		// Its resources, for its own spoke (resources.go): after its
		// tools, so that none of theirs is renamed.
		for _, r := range resourceFunctions {
			offer(r.name, r.desc, apps.EffectRead, true, r.params, TextResult, tool{name: r.name, kind: r.kind})
		}
	}
	for k := range a.cfg.Tools {
		if !used[k] {
			names := make([]string, 0, len(l.Tools))
			for _, t := range l.Tools {
				names = append(names, t.Name)
			}
			errs = append(errs, fmt.Errorf("tools.%s: the server has no such tool (it has %s)", k, strings.Join(names, ", ")))
		}
	}
	for _, e := range a.cfg.Net {
		m.Hosts = append(m.Hosts, e.String())
	}
	b.manifest = m
	return b, errors.Join(errs...)
}

// decoded is a schema as safeSchema reads it (nil for none).
func decoded(raw json.RawMessage) any {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// toolConfig finds a tool's configuration by its MCP name, its function
// name, or its MCP name in lower case (viper folds keys).
func (a *App) toolConfig(name, fn string) (string, ToolConfig) {
	for _, k := range []string{name, fn, strings.ToLower(name)} {
		if tc, ok := a.cfg.Tools[k]; ok {
			return k, tc
		}
	}
	return "", ToolConfig{}
}
