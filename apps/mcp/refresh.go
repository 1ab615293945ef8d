package mcp

// When a server's tools change: the fingerprint of the listing an app was
// built from, checking a live listing against it (ErrChanged), and
// listing the tools again on request (Refresh).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// listedSum is the fingerprint of the listing the app was built from.
func (a *App) listedSum() [32]byte {
	a.sumOnce.Do(func() { a.sum = a.listed.sum() })
	return a.sum
}

// listLive starts the server, lists its tools and stops it.
// listLive starts the server and lists its tools, within its
// StartTimeout — or DefaultListTimeout when it was allowed the network
// (a first npx run downloads the server). The network is asked as a
// call's start asks it (apps.Network on ctx: a turn's dialog, or the
// terminal for `bulkhead mcp add` and doctor); with no one to ask, it
// has none.
func (a *App) listLive(ctx context.Context) (listing, error) {
	cfg, _ := a.current()
	net, _ := a.askNetwork(ctx, cfg) // before the deadline: a person may be answering
	timeout := cfg.StartTimeout
	if len(net) > 0 {
		timeout = max(timeout, DefaultListTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := (&instance{app: a}).connect(ctx, cfg, net)
	if err != nil {
		return listing{}, err
	}
	defer c.stop(true)
	return c.list(ctx)
}

// remember saves a listing in the cache, unless it is the one this
// process last saw there.
func (a *App) remember(l listing) {
	if a.cache == nil {
		return
	}
	sum := l.sum()
	a.mu.Lock()
	defer a.mu.Unlock()
	if sum == a.saved || a.fromFile && a.saved == [32]byte{} && sum == a.listedSum() {
		return
	}
	if err := a.cache.save(a.name, a.key, l); err != nil {
		a.log.Warn("could not save the tool list", "err", err)
		return
	}
	a.saved = sum
}

// ErrChanged is the error of a call to an app whose server, once started,
// listed tools that differ from those the app was installed with in what
// a call relies on (functions, schemas, effects, mappings).
var ErrChanged = errors.New("the MCP server's tools changed since bulkhead listed them")

// verify compares what a server just started lists with the listing the
// app was built from. A new listing is saved in the cache (the next
// bulkhead starts from it). If it changes nothing a call relies on (a new
// version, new descriptions), calls go on; otherwise the app is stale:
// this call and every later one fail with ErrChanged until bulkhead starts
// again, since the hub planned, and permissions were decided, on the
// installed manifest.
func (a *App) verify(l listing) error {
	if l.sum() == a.listedSum() {
		return nil
	}
	a.remember(l)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stale != nil {
		return a.stale
	}
	b, err := a.build(l)
	if err == nil && sameCalls(a.built, b) {
		a.log.Info("the server lists other tools now, with the same functions; the cache is refreshed", "was", a.listed.String(), "now", l.String())
		return nil
	}
	detail := "other tools"
	if err != nil {
		detail = err.Error()
	}
	a.stale = fmt.Errorf("%w (%s, now %s: %s); the new list is saved: start bulkhead again to use it", ErrChanged, a.listed.String(), l.String(), clip(detail, 400))
	a.log.Warn("the server's tools changed; its calls fail until bulkhead starts again", "was", a.listed.String(), "now", l.String(), "detail", clip(detail, 400))
	return a.stale
}

func (a *App) staleErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stale
}

// sameCalls reports whether two builds call and check alike: the same
// functions with the same schemas, effects and keys, the same tools
// behind them, the same provides and hosts. Descriptions may differ.
func sameCalls(x, y built) bool {
	strip := func(b built) apps.Manifest {
		m := b.manifest
		m.Description = ""
		m.Functions = slices.Clone(m.Functions)
		for i := range m.Functions {
			m.Functions[i].Description = ""
		}
		return m
	}
	return reflect.DeepEqual(strip(x), strip(y)) && maps.Equal(x.tools, y.tools)
}

// Refreshed says what listing a server's tools live found.
type Refreshed struct {
	App             string
	Server, Version string // as the server names itself
	Tools           int
	// Cached: the cache held a listing for this configuration before.
	// Changed: the live listing differs from that one (for App.Refresh:
	// from the one the app was installed with).
	Cached, Changed bool
	// Stale (App.Refresh): it differs in what calls rely on. The new
	// tools are used once bulkhead starts again; until then a call on a
	// newly started server fails with ErrChanged.
	Stale bool
	// Err is why the server could not be listed, or the app could not be
	// built from what it listed.
	Err error
}

// Refresh starts the server, lists its tools, saves them in cache (if not
// nil) and stops it; then builds the app from the listing and checks it
// against cat, as Open would. `bulkhead doctor` does this for each
// enabled server.
func Refresh(ctx context.Context, name string, cfg Server, cat *apps.Catalog, cache *Cache, log *slog.Logger) Refreshed {
	r := Refreshed{App: name}
	a, err := prepare(name, cfg, cache, log)
	if err != nil {
		r.Err = err
		return r
	}
	var before listing
	if cache != nil {
		before, err = cache.load(name, a.key)
		r.Cached = err == nil
	}
	l, err := a.listLive(ctx)
	if err != nil {
		r.Err = fmt.Errorf("mcp %s: %w: %w", name, ErrUnlisted, err)
		return r
	}
	r.Server, r.Version, r.Tools = l.Server, l.Version, len(l.Tools)
	r.Changed = r.Cached && before.sum() != l.sum()
	if cache != nil {
		if err := cache.save(name, a.key, l); err != nil {
			r.Err = err
			return r
		}
	}
	r.Err = a.install(l, cat)
	return r
}

// Refresh lists the app's tools live (starting and stopping the server),
// saves them in the cache the app was opened with, and says how they
// compare with those it was installed with. The installed manifest is
// kept: the hub plans on it, and permissions are decided on it.
func (a *App) Refresh(ctx context.Context) Refreshed {
	r := Refreshed{App: a.name, Cached: a.cache != nil}
	l, err := a.listLive(ctx)
	if err != nil {
		r.Err = fmt.Errorf("mcp %s: %w", a.name, err)
		return r
	}
	r.Server, r.Version, r.Tools = l.Server, l.Version, len(l.Tools)
	a.remember(l)
	if l.sum() == a.listedSum() {
		return r
	}
	r.Changed = true
	b, err := a.build(l)
	r.Stale = err != nil || !sameCalls(a.built, b)
	if err != nil {
		r.Err = fmt.Errorf("mcp %s: %w", a.name, err)
	}
	return r
}
