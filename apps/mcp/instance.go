package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
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

// progressSeq numbers the progress tokens of calls.
var progressSeq atomic.Uint64

// Bounds of the progress notifications passed on from one call: a burst,
// then so many a second; the others are dropped.
const (
	progressBurst   = 5
	progressPerSec  = 10
	progressMessage = 200 // bytes of a notification's message shown
)

// progressTo is how a call's progress notifications reach report:
// rate-limited, the message cleaned and cut.
func progressTo(report func(apps.Progress), app, fn string) func(*sdk.ProgressNotificationParams) {
	var mu sync.Mutex
	tokens, last := float64(progressBurst), time.Time{}
	return func(p *sdk.ProgressNotificationParams) {
		mu.Lock()
		now := time.Now()
		if !last.IsZero() {
			tokens = min(progressBurst, tokens+now.Sub(last).Seconds()*progressPerSec)
		}
		last = now
		ok := tokens >= 1
		if ok {
			tokens--
		}
		mu.Unlock()
		if ok {
			report(apps.Progress{App: app, Function: fn, Done: p.Progress, Total: p.Total, Message: cleanLine(p.Message, progressMessage)})
		}
	}
}

// conn is one running server.
type conn struct {
	log     *slog.Logger
	app     string // the app's name
	cfg     Server // the config it was started with
	session *sdk.ClientSession
	max     int
	// progress holds, by progress token, what each running call does
	// with the server's progress notifications.
	progress sync.Map
	// streamable-HTTP servers only: cancelling httpCtx ends every request
	http       *http.Transport
	httpCtx    context.Context
	httpCancel context.CancelFunc
	// stdio servers only
	cmd       *exec.Cmd
	sandboxed bool          // cmd is the sandbox's launcher
	exited    chan struct{} // closed once the process is waited for
	exitErr   error
	gate      *stderrGate  // the app's: what its servers may log
	stderr    *stderrLog   // this process's stderr (stdio servers)
	private   *atomic.Bool // the instance's: withhold stderr
	// the network access the process holds (hold), and what releases it
	leases   []apps.Lease
	releases []func()
	ended    atomic.Pointer[string] // why a lease ended and the process was stopped
	// the layers it writes its folders through, held while it runs
	changes *changes.Store
	layers  []changes.Layer
	// what went wrong with the stream
	over    atomic.Bool  // a message exceeded the frame limit
	readErr atomic.Value // the first read error that is not EOF (error text)
	// what the SDK does not tell (tap.go): the tools/list requests in
	// flight (by id), the listed tools' taskSupport, what the server
	// asked of bulkhead
	lists  sync.Map
	wireMu sync.Mutex
	tasks  map[string]string
	asked  []string
}

// frameLimit bounds one JSON-RPC message.
func frameLimit(maxOutput int) int { return max(4*maxOutput, 1<<20) }

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

// connect starts the server (or opens the HTTP session) and initialises
// the MCP session; a stdio server's sandbox opens the endpoints net.
func (in *instance) connect(ctx context.Context, cfg Server, net []sandbox.Endpoint) (*conn, error) {
	a := in.app
	c := &conn{log: a.log, app: a.name, cfg: cfg, max: frameLimit(cfg.MaxOutput), gate: a.stderr, private: &in.private}
	var transport sdk.Transport
	if cfg.URL != "" {
		c.http = http.DefaultTransport.(*http.Transport).Clone()
		c.httpCtx, c.httpCancel = context.WithCancel(context.Background())
		transport = &sdk.StreamableClientTransport{Endpoint: cfg.URL, MaxRetries: -1, DisableStandaloneSSE: true, MaxEventSize: c.max,
			HTTPClient: &http.Client{Transport: capped{c}}}
	} else {
		owner := changes.Owner{App: a.name, Chat: permissions.ChatOf(ctx), Session: permissions.SessionOf(ctx), Private: apps.IsPrivate(ctx)}
		t, err := c.start(cfg, net, owner)
		if err != nil {
			return nil, fmt.Errorf("could not start the MCP server (%s): %w", cfg.Command, err)
		}
		transport = t
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "bulkhead", Version: "1"}, &sdk.ClientOptions{
		Logger:       a.log.With("component", "mcp-client"),
		Capabilities: &sdk.ClientCapabilities{},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			// rate-limited and kept out of the log in a private turn, as stderr is
			a.stderr.line("server log", fmt.Appendf(nil, "%s %s: %v", r.Params.Level, r.Params.Logger, r.Params.Data), in.private.Load())
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			if r == nil || r.Params == nil {
				return
			}
			tok, _ := r.Params.ProgressToken.(string)
			if f, ok := c.progress.Load(tok); ok {
				f.(func(*sdk.ProgressNotificationParams))(r.Params)
			}
		},
	})
	client.AddReceivingMiddleware(c.asks)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		err = c.explainStart(ctx, err)
		c.stop(false)
		return nil, fmt.Errorf("could not start the MCP server: %w", err)
	}
	c.session = cs
	return c, nil
}

// list lists the server's tools (and which of them require tasks),
// and names its prompts.
func (c *conn) list(ctx context.Context) (listing, error) {
	var tools []*sdk.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return listing{}, fmt.Errorf("listing its tools: %w", c.explainStart(ctx, err))
		}
		tools = append(tools, t)
	}
	l := newListing(c.session.InitializeResult(), tools, c.taskSupport())
	l.Prompts, l.Prompted = c.listPrompts(ctx)
	l.Asked = c.askedNames()
	return l, nil
}

// start runs the command in its own process group, talking over pipes
// that this side owns (so waiting for the process never cuts off a reply
// still in a pipe). The folders it may write, it writes through layers
// of its own, made for owner and held while it runs.
func (c *conn) start(cfg Server, net []sandbox.Endpoint, owner changes.Owner) (sdk.Transport, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	pol, exe, err := policy(cfg)
	pol.Net = net
	if err == nil {
		err = c.stage(&pol, cfg.Changes, owner)
	}
	var cmd *exec.Cmd
	cleanup := func() {}
	if err == nil {
		cmd, cleanup, err = sandbox.Command(context.Background(), pol, cfg.Dir, exe, cfg.Args...)
	}
	if err != nil {
		c.unstage()
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	stderr := &stderrLog{gate: c.gate, private: c.private}
	cmd.Stderr = stderr
	c.stderr = stderr
	if pol.Unconfined {
		cmd.WaitDelay = time.Second // a grandchild holding stderr cannot block Wait
	}
	c.sandboxed = !pol.Unconfined
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		cleanup()
		c.unstage()
		inW.Close()
		outR.Close()
		return nil, err
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	for _, l := range c.layers {
		c.changes.Hold(l.ID, func() {
			why := whyChanges
			c.ended.CompareAndSwap(nil, &why)
			c.kill()
		})
	}
	c.log.Info("started MCP server", "pid", cmd.Process.Pid, "command", exe, "sandboxed", c.sandboxed)
	go func() {
		c.exitErr = cmd.Wait()
		// Its last line, even one without a newline, is kept and logged
		// before anyone hears that it exited.
		stderr.flush()
		cleanup()
		c.unstage()
		c.log.Info("MCP server exited", "pid", cmd.Process.Pid, "status", fmt.Sprint(c.exitErr))
		close(c.exited)
	}()
	return &watched{c: c, t: &sdk.IOTransport{Reader: &limited{r: outR, c: c}, Writer: inW, MaxLineLength: -1}}, nil
}

// stage gives each folder pol lets the server write a layer of its
// own; without a store, they are read-only to it.
func (c *conn) stage(pol *sandbox.Policy, store *changes.Store, owner changes.Owner) error {
	if store == nil || pol.Unconfined || len(pol.ReadWrite) == 0 {
		return nil
	}
	c.changes = store
	pol.Layers = map[string]sandbox.Overlay{}
	for _, d := range pol.ReadWrite {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			// The likeliest first start of all: the folder is not made yet.
			return &FolderError{App: c.app, Folders: []string{d}}
		}
		l, err := store.New(owner, d)
		if err != nil {
			return fmt.Errorf("a layer for %s: %w", d, err)
		}
		c.layers = append(c.layers, l)
		pol.Layers[d] = l.Overlay()
	}
	pol.Deny = append(slices.Clone(pol.Deny), store.Root())
	return nil
}

// unstage lets go of the layers once the process has ended: a layer it
// wrote nothing in goes, the others wait, as change sets, for the
// person.
func (c *conn) unstage() {
	for _, l := range c.layers {
		c.changes.Release(l.ID)
		c.changes.Drop(l)
	}
	c.layers = nil
}

// stop ends the session and the process group and waits for the process.
// Graceful: close its input and give it a moment to exit first.
func (c *conn) stop(graceful bool) {
	for _, r := range c.releases {
		r()
	}
	c.releases = nil
	if c.cmd == nil { // HTTP: a server in doubt gets no goodbye
		if !graceful {
			c.httpCancel()
		}
		if c.session != nil {
			_ = c.session.Close()
		}
		c.httpCancel()
		c.http.CloseIdleConnections()
		return
	}
	if !graceful {
		c.kill()
	}
	if c.session != nil {
		_ = c.session.Close() // closes our ends of the pipes: the server reads EOF
	}
	if graceful {
		select {
		case <-c.exited:
		case <-time.After(2 * time.Second):
			c.kill()
		}
	}
	killGroup(c.cmd, true) // whatever is left of the group
	<-c.exited
}

// kill ends the server and whatever it started. A sandboxed server's
// launcher does it on SIGTERM (killing a launcher outright would orphan
// the server's children); one that has not exited within a few seconds
// is killed.
func (c *conn) kill() {
	if !c.sandboxed {
		killGroup(c.cmd, true)
		return
	}
	killGroup(c.cmd, false)
	select {
	case <-c.exited:
	case <-time.After(3 * time.Second):
	}
}

// healthy reports whether a call error left the connection usable: the
// server answered with a JSON-RPC error, and nothing else went wrong.
func (c *conn) healthy(ctx context.Context, err error) bool {
	if ctx.Err() != nil || c.over.Load() || c.readErr.Load() != nil || c.hasExited() {
		return false
	}
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

func (c *conn) hasExited() bool {
	if c.exited == nil {
		return false
	}
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// explain says what went wrong with a failed exchange, in plain words.
func (c *conn) explain(ctx context.Context, err error) error {
	switch {
	case c.ended.Load() != nil:
		return fmt.Errorf("%s during the call: its process was stopped; the next call starts it afresh and asks again", *c.ended.Load())
	case c.over.Load():
		return fmt.Errorf("the MCP server's output was too large (over %d bytes in one message); the call was dropped", c.max)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return errors.New("the MCP server did not answer in time; it was stopped")
	case ctx.Err() != nil:
		return ctx.Err()
	}
	if msg, ok := c.readErr.Load().(string); ok {
		return fmt.Errorf("the MCP server sent malformed JSON-RPC (%s); it was stopped", clip(msg, 200))
	}
	if c.exited != nil {
		select {
		case <-c.exited:
		case <-time.After(time.Second): // the pipe may close just before the exit is seen
		}
		select {
		case <-c.exited:
			return fmt.Errorf("the MCP server exited during the call (%v); %s", c.exitErr, c.stderrWords())
		default:
		}
	}
	return fmt.Errorf("the MCP server failed: %v", err)
}

// explainStart is explain for an exchange of the server's start (the
// MCP handshake, the listing of its tools): a process that exited by
// then is an *ExitError — its exit status, its last lines of stderr and
// the likeliest cause.
func (c *conn) explainStart(ctx context.Context, err error) error {
	if c.exited != nil && c.ended.Load() == nil && !c.over.Load() {
		select {
		case <-c.exited:
		case <-time.After(time.Second): // the pipe may close just before the exit is seen
		}
		if c.hasExited() {
			return c.exitError()
		}
	}
	return c.explain(ctx, err)
}

// limited caps the bytes of one line (one JSON-RPC message) on the
// server's stdout.
type limited struct {
	r    io.ReadCloser
	c    *conn
	line int
}

var errTooLarge = errors.New("message too large")

func (l *limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		l.line = n - i - 1
	} else {
		l.line += n
	}
	if l.line > l.c.max {
		l.c.over.Store(true)
		return 0, errTooLarge
	}
	return n, err
}

func (l *limited) Close() error { return l.r.Close() }

// watched records the first read error of a connection.
type watched struct {
	c *conn
	t sdk.Transport
}

func (w *watched) Connect(ctx context.Context) (sdk.Connection, error) {
	cn, err := w.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &watchedConn{Connection: cn, c: w.c}, nil
}

type watchedConn struct {
	sdk.Connection
	c *conn
}

func (w *watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := w.Connection.Read(ctx)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrClosed) && ctx.Err() == nil {
		w.c.readErr.CompareAndSwap(nil, err.Error())
	}
	if err == nil {
		w.c.received(m) // before the SDK reads it (tap.go)
	}
	return m, err
}

func (w *watchedConn) Write(ctx context.Context, m jsonrpc.Message) error {
	w.c.listRequested(m)
	return w.Connection.Write(ctx, m)
}

// capped caps HTTP response bodies of a streamable-HTTP server.
type capped struct{ c *conn }

func (t capped) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(t.c.httpCtx, cancel)
	done := func() { stop(); cancel() }
	watched := t.c.requestWatched(r) // a tools/list: its answer is read (tap.go)
	resp, err := t.c.http.RoundTrip(r.WithContext(ctx))
	if err != nil {
		done()
		return nil, err
	}
	body := &cappedBody{ReadCloser: resp.Body, c: t.c, left: int64(t.c.max), done: done}
	if watched {
		body.tap = newBodyTap(t.c, resp.Header.Get("Content-Type"))
	}
	resp.Body = body
	return resp, nil
}

type cappedBody struct {
	io.ReadCloser
	c    *conn
	left int64
	done func()
	tap  *bodyTap // nil: not read
}

func (b *cappedBody) Close() error {
	err := b.ReadCloser.Close()
	b.done()
	return err
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		b.c.over.Store(true)
		return 0, errTooLarge
	}
	if b.tap != nil {
		b.tap.feed(p[:n], err != nil)
	}
	return n, err
}

// stderrWords say, truly, where the process's stderr went.
func (c *conn) stderrWords() string {
	if c.stderr == nil {
		return "it has no stderr (a streamable-HTTP server)"
	}
	return c.stderr.words()
}
