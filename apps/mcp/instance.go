package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// instance is one spoke's connection to the server: a child process (or
// an HTTP session) started on first use. Calls are serialised.
type instance struct {
	app    *App
	mu     sync.Mutex
	conn   *conn
	closed bool
	// private: the instance has served a private turn (apps.IsPrivate):
	// its servers' stderr is withheld from the log from then on. A
	// private query's spokes have instances of their own, a private
	// chat's serve only it.
	private atomic.Bool
}

func (in *instance) Manifest() apps.Manifest { return in.app.manifest }

func (in *instance) log() *slog.Logger { return in.app.log }

// Call calls the tool behind a function. Every failure fails only this
// call; a failure that leaves the connection in doubt stops the process,
// and the next call starts a fresh one.
func (in *instance) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	t, ok := in.app.tools[c.Function]
	if !ok {
		return nil, fmt.Errorf("no function %q", c.Function)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil, errors.New("the app's connection is closed")
	}
	if err := in.app.staleErr(); err != nil {
		return nil, err
	}
	if apps.IsPrivate(ctx) {
		in.private.Store(true)
	}
	if in.conn != nil && !in.conn.serves(ctx) {
		// The access its process was started with has ended (a network
		// grant revoked, the session that allowed it gone), or was given
		// to another session: a fresh process, which asks again.
		in.log().Info("restarting the server: the network access its process held has ended or is another session's")
		in.conn.stop(true)
		in.conn = nil
	}
	report := apps.ProgressOf(ctx)
	if in.conn == nil {
		// The turn says what it waits for: this server's start.
		report(apps.Progress{App: in.app.name, Function: c.Function, Starting: true})
		cn, err := in.start(ctx)
		report(apps.Progress{App: in.app.name, Function: c.Function})
		if err != nil {
			return nil, err
		}
		in.conn = cn
	}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	// failed is what a call that failed in the exchange says: a server
	// that answered with an error keeps running; one in doubt is stopped.
	failed := func(err error) error {
		if in.conn.healthy(ctx, err) {
			return fmt.Errorf("the MCP server refused the call: %s", clip(err.Error(), 2000))
		}
		err = in.conn.explain(ctx, err)
		in.conn.stop(false)
		in.conn = nil
		return err
	}
	if t.kind != callTool {
		// The server's resources (resources.go), on this spoke's own
		// session.
		var res struct {
			URI string `json:"uri"`
		}
		if t.kind == readResource {
			if err := json.Unmarshal(args, &res); err != nil || res.URI == "" {
				return nil, errors.New("read_resource takes the resource's uri")
			}
		}
		text, err := in.conn.resources(ctx, t.kind, res.URI)
		if err != nil {
			return nil, failed(err)
		}
		return textResult(text, in.app.cfg.MaxOutput)
	}
	params := &sdk.CallToolParams{Name: t.name, Arguments: args}
	// The tool's progress notifications reach the turn's status line.
	tok := fmt.Sprintf("bulkhead-%d", progressSeq.Add(1))
	params.SetProgressToken(tok)
	in.conn.progress.Store(tok, progressTo(report, in.app.name, c.Function))
	defer in.conn.progress.Delete(tok)
	had := in.conn.askedNames()
	cn := in.conn
	res, err := cn.session.CallTool(ctx, params)
	var out json.RawMessage
	if err != nil {
		err = failed(err)
	} else if out, err = result(res, t.structured, in.app.cfg.MaxOutput); err == nil || !res.IsError {
		return out, err
	}
	// What it asked for during the call, and did not get, is the likely
	// cause of its failure.
	if asked := slices.DeleteFunc(cn.askedNames(), func(a string) bool { return slices.Contains(had, a) }); len(asked) > 0 {
		err = fmt.Errorf("%w (the server asked bulkhead for %s, which bulkhead does not offer MCP servers)", err, strings.Join(asked, " and "))
	}
	return nil, err
}

// start starts the server for calls: connects, lists its tools and
// checks them against those the app was installed with (App.verify).
func (in *instance) start(ctx context.Context) (*conn, error) {
	cfg, cl := in.app.current()
	net, leases := in.app.askNetwork(ctx, cfg) // before the start's own deadline: a person may be answering
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	cn, err := in.connect(ctx, cfg, net)
	if err != nil {
		return nil, err
	}
	cn.hold(in.app.name, leases, cl)
	if why := cn.ended.Load(); why != nil {
		cn.stop(false)
		return nil, fmt.Errorf("%s as its process started: it was stopped; try again", *why)
	}
	l, err := cn.list(ctx)
	if err == nil {
		err = in.app.verify(l)
	}
	if err != nil {
		cn.stop(true)
		return nil, err
	}
	return cn, nil
}

// Close stops the instance's process; later calls fail.
func (in *instance) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
	if in.conn != nil {
		in.conn.stop(true)
		in.conn = nil
	}
	return nil
}
