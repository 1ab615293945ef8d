package mcp

// What the SDK does not tell: which tools require tasks, and what a
// server asks of bulkhead.
//
// A tool's execution.taskSupport (MCP 2025-11-25) has no field in the
// SDK's Tool (go-sdk v1.8.0 drops it), so the server's answers to
// tools/list are read here off the wire, before the SDK reads them: a
// stdio server's through its connection (watchedConn), a
// streamable-HTTP server's through its response bodies (capped), as
// JSON or as server-sent events. A tool that requires tasks runs only
// as one, which bulkhead does not support: it is not offered
// (App.build), and `bulkhead mcp list` says so.
//
// bulkhead advertises no client capabilities: a server that asks for
// sampling or elicitation gets an error, one that asks for roots gets
// none. What it asked is noted (the listing keeps what it asked while it
// was listed; a call's tool error says what it asked): a request it sends
// (asks), or, from protocol 2026-07-28, the inputRequests of a result,
// read off the wire as taskSupport is (the SDK fulfils them itself).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	methodListTools = "tools/list"
	taskRequired    = "required"
)

// askedFor names what a server's request asks of bulkhead.
var askedFor = map[string]string{
	"sampling/createMessage": "sampling",
	"elicitation/create":     "elicitation",
	"roots/list":             "roots",
}

// askable is what a listing may say a server asked for, sorted.
var askable = []string{"elicitation", "roots", "sampling"}

// listRequested notes a tools/list request the client sends: its answer
// is read for its tools' taskSupport.
func (c *conn) listRequested(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Request)
	if !ok || r.Method != methodListTools || !r.IsCall() {
		return false
	}
	c.lists.Store(r.ID, true)
	return true
}

// received reads a message from the server: the answer to a tools/list
// request says which of its tools require tasks; a result's
// inputRequests, what it asks of bulkhead.
func (c *conn) received(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Response)
	if !ok || r == nil {
		return
	}
	if bytes.Contains(r.Result, []byte(`"inputRequests"`)) {
		var in struct {
			InputRequests map[string]struct {
				Method string `json:"method"`
			} `json:"inputRequests"`
		}
		if json.Unmarshal(r.Result, &in) == nil {
			for _, ir := range in.InputRequests {
				if what, ok := askedFor[ir.Method]; ok {
					c.ask(what)
				}
			}
		}
	}
	if _, ok := c.lists.LoadAndDelete(r.ID); !ok || len(r.Result) == 0 {
		return
	}
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(r.Result, &page) != nil {
		return
	}
	c.wireMu.Lock()
	defer c.wireMu.Unlock()
	for _, t := range page.Tools {
		if t.Execution == nil || t.Execution.TaskSupport == "" || len(t.Execution.TaskSupport) > 32 {
			continue
		}
		if c.tasks == nil {
			c.tasks = map[string]string{}
		}
		c.tasks[t.Name] = t.Execution.TaskSupport
	}
}

// taskSupport is each listed tool's taskSupport, by name.
func (c *conn) taskSupport() map[string]string {
	c.wireMu.Lock()
	defer c.wireMu.Unlock()
	out := make(map[string]string, len(c.tasks))
	for k, v := range c.tasks {
		out[k] = v
	}
	return out
}

// asks is the client middleware that notes what the server asks of
// bulkhead (askedFor), then lets the SDK answer it as it does for a
// client with no capabilities.
func (c *conn) asks(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if what, ok := askedFor[method]; ok {
			c.ask(what)
		}
		return next(ctx, method, req)
	}
}

// ask notes that the server asked for what.
func (c *conn) ask(what string) {
	c.wireMu.Lock()
	first := !slices.Contains(c.asked, what)
	if first {
		c.asked = append(c.asked, what)
		slices.Sort(c.asked)
	}
	c.wireMu.Unlock()
	if first {
		c.log.Warn("the server asked for " + what + ", which bulkhead does not offer MCP servers")
	}
}

// askedNames is what the server has asked of bulkhead, sorted.
func (c *conn) askedNames() []string {
	c.wireMu.Lock()
	defer c.wireMu.Unlock()
	return slices.Clone(c.asked)
}

// listPrompts names the server's prompts, sorted, at most maxPrompts of
// them, and counts them all: they are listed, never run. A server that
// fails to list them has none listed.
func (c *conn) listPrompts(ctx context.Context) ([]string, int) {
	init := c.session.InitializeResult()
	if init == nil || init.Capabilities == nil || init.Capabilities.Prompts == nil {
		return nil, 0
	}
	var names []string
	n := 0
	for p, err := range c.session.Prompts(ctx, nil) {
		if err != nil {
			c.log.Warn("could not list the server's prompts", "err", clip(err.Error(), 200))
			return nil, 0
		}
		if p == nil || p.Name == "" {
			continue
		}
		if n++; n > maxTools {
			break
		}
		if len(names) < maxPrompts {
			names = append(names, clip(p.Name, maxNameLen-len("…")))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), max(n, len(names))
}

// watchedCalls are the requests whose answers are read: tools/list's
// for taskSupport, the others for inputRequests.
var watchedCalls = []string{methodListTools, "tools/call", "resources/read", "prompts/get"}

// requestWatched reports whether an HTTP request carries a request
// whose answer is read (watchedCalls); a tools/list is noted, as
// listRequested notes it.
func (c *conn) requestWatched(r *http.Request) bool {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return false
	}
	body, err := r.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, int64(c.max)))
	if err != nil || !slices.ContainsFunc(watchedCalls, func(m string) bool { return bytes.Contains(data, []byte(m)) }) {
		return false
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return false
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() || !slices.Contains(watchedCalls, req.Method) {
		return false
	}
	c.listRequested(m)
	return true
}

// bodyTap reads the messages of an HTTP response body as they pass to
// the SDK: a JSON body whole, at its end; an event stream event by
// event, each as its blank line passes.
type bodyTap struct {
	c    *conn
	sse  bool
	line []byte // JSON: the body so far; events: the line being read
	data []byte // events: the data of the event being read
}

func newBodyTap(c *conn, contentType string) *bodyTap {
	return &bodyTap{c: c, sse: strings.HasPrefix(strings.TrimSpace(strings.ToLower(contentType)), "text/event-stream")}
}

// feed reads p, the bytes that pass; end: the body ended.
func (t *bodyTap) feed(p []byte, end bool) {
	if !t.sse {
		t.line = append(t.line, p...)
		if end {
			t.message(t.line)
			t.line = nil
		}
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.line = append(t.line, p...)
			break
		}
		line := append(t.line, p[:i]...)
		p = p[i+1:]
		t.event(bytes.TrimSuffix(line, []byte("\r")))
		t.line = line[:0]
	}
	if end {
		if len(t.line) > 0 {
			t.event(t.line)
		}
		t.event(nil)
	}
}

// event reads one line of an event stream; a blank one ends an event.
func (t *bodyTap) event(line []byte) {
	switch {
	case len(line) == 0:
		if len(t.data) > 0 {
			t.message(t.data)
		}
		t.data = t.data[:0]
	case bytes.HasPrefix(line, []byte("data:")):
		if len(t.data) > 0 {
			t.data = append(t.data, '\n')
		}
		t.data = append(t.data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
	}
}

func (t *bodyTap) message(data []byte) {
	if !bytes.Contains(data, []byte(`"tools"`)) && !bytes.Contains(data, []byte(`"inputRequests"`)) {
		return // nothing received reads
	}
	if m, err := jsonrpc.DecodeMessage(data); err == nil {
		t.c.received(m)
	}
}
