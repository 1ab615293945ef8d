package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
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

// stderrWords say, truly, where the process's stderr went.
func (c *conn) stderrWords() string {
	if c.stderr == nil {
		return "it has no stderr (a streamable-HTTP server)"
	}
	return c.stderr.words()
}
