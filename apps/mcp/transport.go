package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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
