package mcp

import (
	"context"
	"slices"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// askNetwork is which of the endpoints of the server's config the user
// allows for the process about to start, and the leases of those
// answers: each is asked (apps.Network, on the context of the call that
// starts it); with no one to ask (the tool listing at install, a
// refresh) the process has no network.
func (a *App) askNetwork(ctx context.Context, cfg Server) ([]sandbox.Endpoint, []apps.Lease) {
	if len(cfg.Net) == 0 || cfg.URL != "" {
		return nil, nil
	}
	n := apps.NetworkOf(ctx)
	if n == nil {
		return nil, nil
	}
	var out []sandbox.Endpoint
	var leases []apps.Lease
	for _, e := range cfg.Net {
		if l, ok := n.AllowNetwork(ctx, a.name, e.String()); ok {
			out = append(out, e)
			if l != nil {
				leases = append(leases, l)
			}
		}
	}
	a.log.Info("network for the server's process", "asked", len(cfg.Net), "allowed", len(out))
	return out, leases
}

// Why a process was stopped for access it held.
const (
	whyNetwork = "the app's network grant ended (revoked, or the session that allowed it left)"
	whyConfig  = "the app's configuration changed"
	whyChanges = "what it wrote was discarded, or accepted only in part"
)

// hold makes the process hold the leases of its network access and of
// its config: when one ends, the process is stopped at once — it
// reaches the endpoint, or the folders, no more — and the instance's
// next call starts a fresh one, which asks again.
func (c *conn) hold(app string, network []apps.Lease, config apps.Lease) {
	c.leases = append(slices.Clone(network), config)
	for _, l := range c.leases {
		why := whyNetwork
		if l == config {
			why = whyConfig
		}
		c.releases = append(c.releases, l.Hold(app, func() {
			c.ended.CompareAndSwap(nil, &why)
			if c.cmd != nil {
				c.log.Info("stopping the server: "+why, "pid", c.cmd.Process.Pid)
				c.kill()
			}
		}))
	}
}

// serves says whether the running process may serve a call made with
// ctx: none of the access it holds has ended, and all of it is for the
// caller's session.
func (c *conn) serves(ctx context.Context) bool {
	if c.ended.Load() != nil {
		return false
	}
	for _, l := range c.leases {
		if l.Ended() || !l.For(ctx) {
			return false
		}
	}
	return true
}
