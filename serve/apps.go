package serve

import (
	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/engine"
)

// apps lists the installed apps of a session's profile.
func (s *Server) apps(prof *engine.Profile) []AppInfo {
	var out []AppInfo
	for _, name := range prof.Apps.Names() {
		a, ok := prof.Apps.App(name)
		if !ok {
			continue
		}
		info := AppInfo{Manifest: a.Manifest(), Enabled: prof.Hub.Enabled(name)}
		if m, ok := a.(interface {
			Tools() []mcp.ToolInfo
			Remote() bool
		}); ok {
			info.MCP, info.Tools, info.Remote = true, m.Tools(), m.Remote()
		}
		out = append(out, info)
	}
	for _, u := range prof.Unlisted {
		u = u.Now() // a background listing may have ended since
		info := AppInfo{Manifest: apps.Manifest{Name: u.App}, MCP: true, Unlisted: u.Why, Fix: u.Fix}
		if u.Pending {
			info.Listing, info.Since = true, u.Since
		} else if u.Err != nil {
			info.Failed = engine.Failure(u.App, u.Err)
		}
		out = append(out, info)
	}
	return out
}
