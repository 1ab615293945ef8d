package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// An enabled MCP server whose tool list the cache does not hold (or
// holds in a form the app cannot be built from) is listed in the
// background: the profile starts without it at once — the chat opens,
// keys typed reach it — and shows it as being listed (Unlisted.Now,
// Profile.Listing); once its listing is saved, the profiles that run
// without it start again with it (Relist), and their sessions move there
// at their next call. The serving process has a turn that starts
// meanwhile wait for the listing, saying so (serve). A listing that
// fails leaves the server unlisted, with why — its exit status, its own
// stderr and the likeliest cause (mcp.ExitError) — and how to list it;
// it is not tried again for that configuration while the engine runs
// (`bulkhead mcp add`, doctor and the apps screen's refresh list it).

// Listing is one MCP server's listing in the background.
type Listing struct {
	App   string
	Since time.Time
	done  chan struct{}
	// set before done is closed
	err      error
	why, fix string
}

// Done is closed once the listing has ended, and the profiles that run
// without the server have been started again if it was listed.
func (l *Listing) Done() <-chan struct{} { return l.done }

// Running reports whether the listing still runs.
func (l *Listing) Running() bool {
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

// Err is why the listing failed: nil while it runs, and once it listed
// the server.
func (l *Listing) Err() error {
	if l.Running() {
		return nil
	}
	return l.err
}

// Failure says what the person is told of a listing that failed: the
// server, its exit status and its stderr's last line (Failure); "" while
// it runs, and once it listed the server.
func (l *Listing) Failure() string {
	if err := l.Err(); err != nil {
		return Failure(l.App, err)
	}
	return ""
}

// Failure is one line for the MCP server app that could not be started
// or listed with err: for a server that exited as it started, its exit
// status and the last line of its stderr, made safe to print; else err's
// words, on one line. Where it says why at length is the apps screen.
func Failure(app string, err error) string {
	var ee *mcp.ExitError
	if errors.As(err, &ee) {
		s := fmt.Sprintf("the MCP server %s failed to start (%s)", termtext.OneLine(app), termtext.OneLine(ee.Status))
		if n := len(ee.Stderr); n > 0 {
			s += ": " + termtext.OneLine(ee.Stderr[n-1])
		}
		return s
	}
	return fmt.Sprintf("the MCP server %s could not be listed: %s", termtext.OneLine(app), termtext.OneLine(err.Error()))
}

// listingKey names a server's configuration for its listing: what the
// cache keys, and the folders and network its sandbox has.
func listingKey(name string, s mcp.Server) string {
	return fmt.Sprintf("%s\x00%s\x00%q\x00%q\x00%v", name, mcp.ConfigKey(s), s.Folders, s.Read, s.Net)
}

// listInBackground lists the server name in the background, or returns
// the listing of its configuration that runs already or failed before.
func (e *Engine) listInBackground(name string, s mcp.Server, cat *apps.Catalog, cache *mcp.Cache, log *slog.Logger) *Listing {
	key := listingKey(name, s)
	e.lmu.Lock()
	defer e.lmu.Unlock()
	if l, ok := e.listings[key]; ok && (l.Running() || l.err != nil) {
		return l
	}
	l := &Listing{App: name, Since: time.Now(), done: make(chan struct{})}
	e.listings[key] = l
	if e.bgCtx.Err() != nil {
		// The engine is closing: nothing starts.
		l.err, l.why = e.bgCtx.Err(), "bulkhead is closing"
		close(l.done)
		return l
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		log.Info("listing an MCP server's tools in the background", "app", name)
		a, err := mcp.OpenContext(e.bgCtx, name, s, cat, cache, log)
		if a != nil {
			_ = a.Close() // Open stopped the server; nothing else runs
		}
		if err != nil {
			l.err, l.why, l.fix = err, err.Error(), unlistedFix(name, s, err, false)
			log.Warn("an MCP server could not be listed; bulkhead runs without it", "app", name, "err", err)
		} else {
			log.Info("an MCP server was listed in the background", "app", name)
		}
		if e.bgCtx.Err() == nil {
			// Its listing is in the cache (or one it cannot be built
			// from, which the profiles then say): they take it.
			e.Relist()
		}
		close(l.done)
	}()
	return l
}

// unlistedFix is how to list a server that could not be listed with
// err; had: the cache held a listing the app could not be built from.
// What the error names as the cause comes first; the network is named
// only when nothing else is.
func unlistedFix(name string, s mcp.Server, err error, had bool) string {
	var ee *mcp.ExitError
	var fe *mcp.FolderError
	then := fmt.Sprintf("; then `r` on the apps screen, `bulkhead mcp add %s` or `bulkhead doctor` lists it once, and the running bulkhead takes it at once", name)
	switch {
	case had:
		return "run `bulkhead doctor`: it lists the server again and says what does not fit the config"
	case errors.As(err, &fe):
		return fe.Fix() + then
	case errors.As(err, &ee) && ee.Fix != "":
		return ee.Fix + then
	case len(s.Net) > 0:
		return fmt.Sprintf("run `bulkhead mcp add %s` (or `bulkhead doctor`) to start and list it once — asking, on the terminal, for the network it names (npx downloads the server); the running bulkhead takes the listing at once; its stderr is in bulkhead.log", name)
	}
	return fmt.Sprintf("`r` on the apps screen, `bulkhead mcp add %s` or `bulkhead doctor` start and list it once; the running bulkhead takes the listing at once; its stderr is in bulkhead.log", name)
}

// Now is u as it stands: while its background listing runs, Pending
// and Since say so and Why says what it waits for; once that listing
// failed, Err, Why and Fix are its failure's.
func (u Unlisted) Now() Unlisted {
	l := u.listing
	if l == nil {
		return u
	}
	u.Pending, u.Since = false, time.Time{}
	if l.Running() {
		u.Pending, u.Since, u.Err = true, l.Since, nil
		u.Why = "its server is starting, to list its tools (in the background: the chat goes on meanwhile)"
		u.Fix = "nothing: it is installed once listed, and a request made meanwhile waits for it"
		return u
	}
	if l.err != nil {
		u.Err, u.Why, u.Fix = l.err, l.why, l.fix
	} else {
		u.Why = "its tools were listed; it is installed from the next request"
		u.Fix = ""
	}
	return u
}

// Listing is the background listings p's sessions wait for: those of the
// servers it runs without that still run.
func (p *Profile) Listing() []*Listing {
	var out []*Listing
	for _, u := range p.Unlisted {
		if u.listing != nil && u.listing.Running() {
			out = append(out, u.listing)
		}
	}
	return out
}

// WaitListed waits until no background listing runs (or ctx ends):
// every profile has then taken what was listed. For tests, and for a
// command that wants the servers listed before it answers.
func (e *Engine) WaitListed(ctx context.Context) error {
	for {
		e.lmu.Lock()
		var running *Listing
		for _, l := range e.listings {
			if l.Running() {
				running = l
				break
			}
		}
		e.lmu.Unlock()
		if running == nil {
			return nil
		}
		select {
		case <-running.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Listings names the servers being listed in the background now, sorted.
func (e *Engine) Listings() []string {
	e.lmu.Lock()
	defer e.lmu.Unlock()
	var out []string
	for _, l := range e.listings {
		if l.Running() {
			out = append(out, l.App)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stopListings ends the background listings and waits for them (Close).
func (e *Engine) stopListings() {
	if e.bgCancel == nil {
		return
	}
	e.bgCancel()
	e.bg.Wait()
}
