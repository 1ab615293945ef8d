package doctor

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
)

// Network is what became of the endpoints an MCP server's config names
// (mcp.<name>.net) while the MCP checks listed it.
type Network struct {
	// Refused are the endpoints its process was not allowed.
	Refused []string
	// Unasked: they were refused without a question — standard input
	// is not a terminal, and --allow-net was not given.
	Unasked bool
}

// defaultRegistry is the npm registry's endpoint when npm cannot say
// which one it is configured for.
const defaultRegistry = "registry.npmjs.org:443"

// mcpChecks says, for each enabled MCP server, whether it started and
// listed its tools, and what became of its cached list. A server that
// could not be listed gets the fix for why: the network its first start
// needs when it was refused (network says what became of it; nil:
// unknown), the registry an npx server downloads from when its config
// names none, else its config. One whose network was refused unasked
// and that bulkhead has a cached tool list of is a note, not a failure:
// bulkhead starts from that list, and a turn asks for the network.
func mcpChecks(rs []mcp.Refreshed, cfg config.Config, network func(string) Network) []Check {
	var out []Check
	where := cfg.File
	if where == "" {
		where = "the configuration"
	}
	stderr := filepath.Join(cfg.DataDir, "bulkhead.log")
	for _, r := range rs {
		name := "MCP server " + r.App
		if r.Err == nil {
			cache := "tool list cached"
			switch {
			case r.Changed:
				cache = "tool list changed since it was cached; cache refreshed"
			case r.Cached:
				cache = "cached tool list up to date"
			}
			out = append(out, Check{Name: name, OK: true, Detail: fmt.Sprintf("%s %s, %d tools; %s", r.Server, r.Version, r.Tools, cache)})
			continue
		}
		if r.Server != "" {
			out = append(out, Check{Name: name, Detail: r.Err.Error(), Fix: fmt.Sprintf("fix mcp.%s in %s to fit the tools the server lists (see the detail)", r.App, where)})
			continue
		}
		s := cfg.MCP[r.App]
		var n Network
		if network != nil {
			n = network(r.App)
		}
		runner, npm := mcp.NPMRunner(s.Command)
		downloads := ""
		if npm {
			downloads = ": " + runner + " downloads the server"
		}
		c := Check{Name: name, Detail: r.Err.Error(),
			Fix: fmt.Sprintf("check mcp.%s in %s; its command must start an MCP server that speaks stdio (or its url one that speaks streamable HTTP); its stderr is in %s", r.App, where, stderr)}
		switch {
		case !errors.Is(r.Err, mcp.ErrUnlisted):
		case npm && len(s.Net) == 0:
			ep := npmRegistry()
			c.Fix = fmt.Sprintf("%s downloads the server from your npm's registry (%s), which mcp.%s does not name: add net: [%s] to mcp.%s in %s, then run `bulkhead doctor --allow-net`; its stderr is in %s",
				runner, ep, r.App, ep, r.App, where, stderr)
		case len(n.Refused) > 0 && n.Unasked:
			c.Fix = fmt.Sprintf("its start needs the network it names (%s%s), which was not asked — standard input is not a terminal: `bulkhead doctor --allow-net` allows it for this listing (or run bulkhead doctor on a terminal and answer y); its stderr is in %s",
				strings.Join(n.Refused, ", "), downloads, stderr)
			if r.Cached {
				c.OK, c.Note = true, true
				c.Detail = "not listed again (" + r.Err.Error() + "); bulkhead starts from the tool list cached before, and a turn that needs it asks for its network"
			}
		case len(s.Net) > 0 && network == nil:
			c.Fix = fmt.Sprintf("its start may need the network it names (%s%s), which is asked on a terminal: run bulkhead doctor there and allow it, or `bulkhead doctor --allow-net`; its stderr is in %s",
				strings.Join(s.Net, ", "), downloads, stderr)
		case len(n.Refused) > 0:
			c.Fix = fmt.Sprintf("its start needs the network it names (%s%s), which you did not allow: run bulkhead doctor again and allow it, or `bulkhead doctor --allow-net`; its stderr is in %s",
				strings.Join(n.Refused, ", "), downloads, stderr)
		}
		out = append(out, c)
	}
	return out
}

// npmRegistry is the endpoint of the registry the user's npm downloads
// from, or the npm registry's.
func npmRegistry() string {
	if reg, err := mcp.NPMRegistry(); err == nil {
		if ep, err := mcp.RegistryEndpoint(reg); err == nil {
			return ep
		}
	}
	return defaultRegistry
}

// relisted says what the serving process did with the tool lists the
// MCP checks cached (Options.Relist).
func relisted(apps []string, err error) Check {
	const name = "serving process's MCP apps"
	switch {
	case err != nil:
		return Check{Name: name, OK: true, Note: true, Detail: "it could not be told of the tool lists just cached: " + err.Error(),
			Fix: "its sessions take them once it starts again: close the bulkhead windows and scripts on this data directory (it exits once unused)"}
	case len(apps) == 0:
		return Check{Name: name, OK: true, Detail: "up to date with the tool lists cached"}
	}
	return Check{Name: name, OK: true, Detail: "installed " + strings.Join(apps, ", ") + " from the tool lists just cached: open sessions use them from their next request"}
}

// notEnabled names each MCP server the config holds that enable does not
// name: it is never installed (a server is an app only when enabled).
func notEnabled(cfg config.Config) []Check {
	var out []Check
	where := cfg.File
	if where == "" {
		where = "the configuration"
	}
	for _, n := range slices.Sorted(maps.Keys(cfg.MCP)) {
		if slices.Contains(cfg.Enable, n) || slices.Contains(cfg.Enable, "mcp") {
			continue
		}
		out = append(out, Check{Name: "MCP server " + n, OK: true, Note: true, Detail: "configured, but not enabled: bulkhead does not install it",
			Fix: fmt.Sprintf("add %s to enable in %s (enable: [%s, %s]), or remove mcp.%s", n, where, strings.Join(cfg.Enable, ", "), n, n)})
	}
	return out
}
