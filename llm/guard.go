package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// The Ollama client reads an answer line by line with a bounded buffer
// and stops, without an error, at a line longer than it; and it reads for
// as long as the server writes. bodyGuard watches the bytes of one call's
// response so that such a stream ends with a LimitError that says what
// happened, instead of silently or never.

// maxLine is the longest answer line the guard lets through: below the
// Ollama client's own buffer (512 KiB).
const maxLine = 500 << 10

type bodyKey struct{}

// bodyGuard holds one call's bounds and the error that ended it.
type bodyGuard struct {
	maxTotal int64

	mu  sync.Mutex
	err error
}

func (g *bodyGuard) fail(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err
	}
	return g.err
}

func (g *bodyGuard) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// guarded is a transport that wraps the body of every response whose
// request carries a bodyGuard.
type guarded struct{ base http.RoundTripper }

func (t guarded) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if g, ok := req.Context().Value(bodyKey{}).(*bodyGuard); ok && resp.Body != nil {
		resp.Body = &guardedBody{ReadCloser: resp.Body, g: g}
	}
	return resp, nil
}

type guardedBody struct {
	io.ReadCloser
	g     *bodyGuard
	total int64
	line  int64 // bytes since the last newline
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if err := b.g.failed(); err != nil {
		return 0, err
	}
	n, err := b.ReadCloser.Read(p)
	b.total += int64(n)
	chunk := p[:n]
	if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
		b.line = int64(n - i - 1)
	} else {
		b.line += int64(n)
	}
	switch {
	case b.line > maxLine:
		return n, b.g.fail(&LimitError{What: "one line of the model server's answer (a tool call's arguments, or a piece of text)",
			Got: fmt.Sprintf("over %d bytes", maxLine), Limit: fmt.Sprint(maxLine, " bytes"), Key: "limits.tool_arg_bytes"})
	case b.total > b.g.maxTotal:
		return n, b.g.fail(&LimitError{What: "the model server's answer", Got: fmt.Sprintf("over %d bytes", b.g.maxTotal),
			Limit: fmt.Sprint(b.g.maxTotal, " bytes"), Key: "limits.answer_bytes"})
	}
	return n, err
}

// withGuard gives ctx a guard for one call's response.
func withGuard(ctx context.Context, lim Limits) (context.Context, *bodyGuard) {
	g := &bodyGuard{maxTotal: 64 * int64(lim.AnswerBytes)}
	return context.WithValue(ctx, bodyKey{}, g), g
}
