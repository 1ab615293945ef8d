package mcp

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// A change of a server's config ends the access its processes were
// started with (invariant 11): Reconfigure, which the serving process
// calls when the config file changes, stops every process of the app —
// each holds the app's config lease, as it holds its network leases —
// and the next call starts one under the new config. Where only what
// the sandbox grants changed (folders, read, net), the new grants apply
// from the next start; where the command itself changed (command, args,
// env, dir, url, tools), the app's calls fail until bulkhead starts
// again, as when its tools change (ErrChanged), since the hub planned on
// the installed manifest.

// configLease is the app's current configuration, as a lease its
// processes hold: it ends when the configuration changes.
type configLease struct {
	mu      sync.Mutex
	ended   bool
	next    int
	holders map[int]func()
}

func (l *configLease) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

func (l *configLease) For(context.Context) bool { return true }

func (l *configLease) Hold(_ string, stop func()) func() {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		stop()
		return func() {}
	}
	if l.holders == nil {
		l.holders = map[int]func(){}
	}
	id := l.next
	l.next++
	l.holders[id] = stop
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.holders, id)
		l.mu.Unlock()
	}
}

// end stops every holder and says how many there were.
func (l *configLease) end() int {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return 0
	}
	l.ended = true
	hs := l.holders
	l.holders = nil
	l.mu.Unlock()
	for _, stop := range hs {
		stop()
	}
	return len(hs)
}

// grants is what the sandbox grants a server's processes, from its
// config: the part Reconfigure can change in a running bulkhead.
type grants struct {
	folders, read []string
	net           []string
}

func grantsOf(s Server) grants {
	g := grants{folders: slices.Clone(s.Folders), read: slices.Clone(s.Read)}
	for _, e := range s.Net {
		g.net = append(g.net, e.String())
	}
	return g
}

func (g grants) equal(o grants) bool {
	return slices.Equal(g.folders, o.folders) && slices.Equal(g.read, o.read) && slices.Equal(g.net, o.net)
}

// current is the app's config as a process starts now, and the lease
// that process holds.
func (a *App) current() (Server, *configLease) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cfgLease == nil {
		a.cfgLease = &configLease{}
	}
	return a.cfg, a.cfgLease
}

// Reconfigure takes the server's config as the config file now says it:
// if anything a process of it was started with changed, every such
// process is stopped (stopped says how many). A change of the grants
// alone (folders, read, net) applies from the next start, which asks
// again for the network; a change of the command, its environment or
// tools makes the app's calls fail until bulkhead starts again.
func (a *App) Reconfigure(s Server) (stopped int, err error) {
	a.mu.Lock()
	old := a.cfg
	sameCommand := cacheKey(s) == a.key && slices.Equal(s.Private, old.Private) && s.Changes == old.Changes && s.Own == old.Own && slices.Equal(s.Reserved, old.Reserved)
	if sameCommand && grantsOf(s).equal(grantsOf(old)) {
		a.mu.Unlock()
		return 0, nil
	}
	if sameCommand {
		a.cfg.Folders, a.cfg.Read, a.cfg.Net = s.Folders, s.Read, s.Net
	} else if a.stale == nil {
		a.stale = fmt.Errorf("mcp %s: its configuration changed (its command, environment or tools); start bulkhead again to use the new one", a.name)
		err = a.stale
	}
	ending := a.cfgLease
	a.cfgLease = &configLease{}
	a.mu.Unlock()
	if ending != nil {
		stopped = ending.end()
	}
	a.log.Info("the server's configuration changed: its processes were stopped", "stopped", stopped, "grants only", sameCommand)
	return stopped, err
}

// Unconfirmed is what a config file that does not load does to the
// app: the network its config grants (net) can no longer be confirmed,
// so an app that has any has its processes stopped, and starts the
// next without network until a config loads again (Reconfigure, which
// asks again). Its folders stay as they were. It says how many
// processes were stopped.
func (a *App) Unconfirmed() (stopped int) {
	a.mu.Lock()
	if len(a.cfg.Net) == 0 {
		a.mu.Unlock()
		return 0
	}
	a.cfg.Net = nil
	ending := a.cfgLease
	a.cfgLease = &configLease{}
	a.mu.Unlock()
	if ending != nil {
		stopped = ending.end()
	}
	a.log.Warn("the config file does not load: the server's network was stopped until it does", "stopped", stopped)
	return stopped
}

// Retire ends the app in this process: its processes are stopped and
// its calls fail with why (its server left the config, or the config no
// longer builds it). It says how many processes were stopped.
func (a *App) Retire(why error) int {
	a.mu.Lock()
	if a.stale == nil {
		a.stale = why
	}
	ending := a.cfgLease
	a.cfgLease = &configLease{}
	a.mu.Unlock()
	if ending == nil {
		return 0
	}
	return ending.end()
}
