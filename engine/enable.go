package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/config"
)

// CheckEnable reports every name in cfg.Enable that is neither an app,
// a pack nor a configured MCP server, as a configuration error that
// names where the list came from (--apps, $BULKHEAD_ENABLE, the file)
// and what the names can be.
func CheckEnable(cfg config.Config) error {
	known := map[string]bool{"none": true, "mcp": true}
	for pack, names := range Packs {
		known[pack] = true
		for _, n := range names {
			known[n] = true
		}
	}
	for _, a := range demo.Apps() {
		known[a.Manifest().Name] = true
	}
	for n := range cfg.MCP {
		known[n] = true
	}
	var errs []error
	for _, n := range cfg.Enable {
		if !known[n] {
			errs = append(errs, cfg.Invalid("enable", fmt.Sprintf("no app or pack named %q; apps: %s; packs: builtin, demo, mcp, none%s",
				n, strings.Join(appNames(), ", "), mcpNames(cfg))))
		}
	}
	return errors.Join(errs...)
}

func appNames() []string {
	var out []string
	for _, p := range []string{"builtin", "demo"} {
		out = append(out, Packs[p]...)
	}
	return out
}

func mcpNames(cfg config.Config) string {
	if len(cfg.MCP) == 0 {
		return ""
	}
	var names []string
	for n := range cfg.MCP {
		names = append(names, n)
	}
	slices.Sort(names)
	return "; MCP servers: " + strings.Join(names, ", ")
}
