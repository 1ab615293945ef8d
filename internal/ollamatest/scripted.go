// Package ollamatest holds test doubles for Ollama: Scripted, an httptest
// server that speaks Ollama's HTTP API (NDJSON streaming, tool calls,
// `format`) and answers from a script; and Real, a real `ollama serve` child
// with a tiny random-weight model, for proving the wire format.
package ollamatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

// Reply is what the scripted model answers to one chat request.
type Reply struct {
	// Chunks are streamed as message content, one NDJSON line each.
	Chunks []string
	// Thinking chunks are streamed before the content.
	Thinking []string
	// ToolCalls are sent in the final message.
	ToolCalls []api.ToolCall
	// Status, if non-zero, answers with this HTTP status and Error.
	Status int
	Error  string
	// CutAfter > 0 closes the connection after that many content chunks,
	// without a final done line (the server died mid-stream).
	CutAfter int
	// GarbageAfter > 0 sends a line that is not JSON after that many
	// content chunks, then ends the stream.
	GarbageAfter int
	// Hang blocks after the first CutAfter (or all) chunks until the client
	// goes away.
	Hang bool
	// Delay is slept before each chunk.
	Delay time.Duration
	// Endless streams Chunks (or "x") over and over, never done, until
	// the client goes away: a runaway model.
	Endless bool
	// PromptTokens and EvalTokens are reported in the final line; zero
	// means "count them": prompt characters/4 and one per chunk.
	PromptTokens, EvalTokens int
	// Before, when set, is called before content chunk i is sent: a test
	// holds a stream there until what it waits for has happened (a Gate).
	// A client that goes away meanwhile ends the stream at once.
	Before func(i int)
}

// before calls hold(i) and reports whether it returned before ctx ended
// (the client went away: the stream is over, whatever hold waits for).
func before(ctx context.Context, hold func(int), i int) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		hold(i)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Text is a reply streamed word by word.
func Text(s string) Reply {
	var chunks []string
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			chunks = append(chunks, w)
		}
	}
	return Reply{Chunks: chunks}
}

// JSON is a reply whose content is v marshalled (for `format` calls).
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return Reply{Chunks: []string{string(b)}}
}

// Script decides the reply to each chat request.
type Script func(req *api.ChatRequest) Reply

// Scripted is a fake Ollama server driven by a Script.
type Scripted struct {
	*httptest.Server
	script Script

	mu       sync.Mutex
	models   map[string]bool
	caps     map[string][]string
	requests []api.ChatRequest
	slots    *slotState // Slotted
	dub      *dubbing   // Dub
	inFlight int        // chat requests being answered
	lastEnd  time.Time  // when the last one ended
}

// Quiet waits until no chat request has been answered for quiet (up to
// limit), and reports whether that came: a benchmark lets one mode's
// background work (the memory upkeep, after its chat went quiet) end
// before it times the other mode on the same machine.
func (s *Scripted) Quiet(quiet, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		idle := s.inFlight == 0 && time.Since(s.lastEnd) >= quiet
		s.mu.Unlock()
		if idle {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// SetCapabilities says what /api/show reports of a model (none: the
// server does not say, as an older Ollama).
func (s *Scripted) SetCapabilities(model string, caps ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caps == nil {
		s.caps = map[string][]string{}
	}
	s.caps[model] = caps
}

// NewScripted starts a scripted server that knows the given models; it is
// closed when the test ends.
func NewScripted(t testing.TB, script Script, models ...string) *Scripted {
	t.Helper()
	s := &Scripted{script: script, models: map[string]bool{}}
	for _, m := range models {
		s.models[m] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "Ollama is running") })
	mux.HandleFunc("/api/version", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"version": "0.0.0-scripted"})
	})
	mux.HandleFunc("/api/show", s.show)
	mux.HandleFunc("/api/tags", s.tags)
	mux.HandleFunc("/api/pull", s.pull)
	mux.HandleFunc("/api/chat", s.chat)
	// A generate with no prompt loads the model, as Ollama's does.
	mux.HandleFunc("/api/generate", func(w http.ResponseWriter, r *http.Request) {
		var req api.GenerateRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !s.has(req.Model) {
			notFound(w, req.Model)
			return
		}
		_ = json.NewEncoder(w).Encode(api.GenerateResponse{Model: req.Model, Done: true, DoneReason: "load"})
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Server.Close)
	return s
}

// OnChat puts serve in front of s's chat requests: it is given each one
// with its body (read, and left in the request to be read again) and the
// handler that answers it; other requests go on as they came.
func (s *Scripted) OnChat(serve func(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler)) {
	next := s.Config.Handler
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		serve(w, r, body, next)
	})
}

// Host is the server's base URL.
func (s *Scripted) Host() string { return s.URL }

// Requests returns every chat request received so far.
func (s *Scripted) Requests() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.ChatRequest(nil), s.requests...)
}

// AddModel makes a model known (as after a pull).
func (s *Scripted) AddModel(m string) {
	s.mu.Lock()
	s.models[m] = true
	s.mu.Unlock()
}

func (s *Scripted) has(m string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.models[m]
}

func notFound(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", model)})
}

func (s *Scripted) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	if !s.has(req.Model) {
		notFound(w, req.Model)
		return
	}
	s.mu.Lock()
	var caps []model.Capability
	for _, c := range s.caps[req.Model] {
		caps = append(caps, model.Capability(c))
	}
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(api.ShowResponse{Capabilities: caps})
}

func (s *Scripted) pull(w http.ResponseWriter, r *http.Request) {
	var req api.PullRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	enc := json.NewEncoder(w)
	fl, _ := w.(http.Flusher)
	for _, done := range []int64{0, 50, 100} {
		_ = enc.Encode(api.ProgressResponse{Status: "pulling " + req.Model, Total: 100, Completed: done})
		if fl != nil {
			fl.Flush()
		}
	}
	s.AddModel(req.Model)
	_ = enc.Encode(api.ProgressResponse{Status: "success"})
}

func (s *Scripted) chat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.inFlight++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.lastEnd = time.Now()
		s.mu.Unlock()
	}()
	if !s.has(req.Model) {
		notFound(w, req.Model)
		return
	}
	reply := s.script(&req)
	if reply.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": reply.Error})
		return
	}
	s.mu.Lock()
	dub := s.dub
	s.mu.Unlock()
	if dub != nil && dubbable(reply) {
		dub.dubbed(w, r, req, reply)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	// A model writes no more than num_predict tokens (a chunk each).
	done := "stop"
	if n, ok := req.Options["num_predict"].(float64); ok && n > 0 && len(reply.Chunks) > int(n) {
		reply.Chunks, done = reply.Chunks[:int(n)], "length"
	}
	send := func(msg api.Message, last bool, m api.Metrics) bool {
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-r.Context().Done():
				return false
			}
		}
		resp := api.ChatResponse{Model: req.Model, CreatedAt: time.Now(), Message: msg, Done: last, Metrics: m}
		if last {
			resp.DoneReason = done
		}
		if err := enc.Encode(resp); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	for _, th := range reply.Thinking {
		if !send(api.Message{Role: "assistant", Thinking: th}, false, api.Metrics{}) {
			return
		}
	}
	for i, c := range reply.Chunks {
		if reply.CutAfter > 0 && i == reply.CutAfter {
			break
		}
		if reply.Before != nil && !before(r.Context(), reply.Before, i) {
			return
		}
		if reply.GarbageAfter > 0 && i == reply.GarbageAfter {
			fmt.Fprintln(w, "<html>proxy error</html>")
			return
		}
		if !send(api.Message{Role: "assistant", Content: c}, false, api.Metrics{}) {
			return
		}
	}
	if reply.Endless {
		piece := "x"
		if len(reply.Chunks) > 0 {
			piece = strings.Join(reply.Chunks, "")
		}
		for send(api.Message{Role: "assistant", Content: piece}, false, api.Metrics{}) {
		}
		return
	}
	if reply.Hang {
		// The headers go out, then nothing: a stalled server.
		if fl != nil {
			fl.Flush()
		}
		<-r.Context().Done()
		return
	}
	if reply.CutAfter > 0 {
		// Die mid-stream: drop the connection without a final line.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return
	}
	m := api.Metrics{PromptEvalCount: reply.PromptTokens, EvalCount: reply.EvalTokens, TotalDuration: time.Millisecond}
	if m.PromptEvalCount == 0 {
		n := 0
		for _, msg := range req.Messages {
			n += len(msg.Content)
		}
		m.PromptEvalCount = n/4 + 1
	}
	if m.EvalCount == 0 {
		m.EvalCount = len(reply.Chunks) + len(reply.Thinking)
	}
	if pm, ok := r.Context().Value(promptMetricsKey{}).(api.Metrics); ok && reply.PromptTokens == 0 {
		m.PromptEvalCount, m.PromptEvalDuration = pm.PromptEvalCount, pm.PromptEvalDuration
	}
	send(api.Message{Role: "assistant", ToolCalls: reply.ToolCalls}, true, m)
}

// Queue is a Script that answers requests with replies in order and fails
// the test (with a 500) when they run out.
func Queue(t testing.TB, replies ...Reply) Script {
	var mu sync.Mutex
	return func(req *api.ChatRequest) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			t.Errorf("scripted ollama: unexpected request #%d for %s", 0, req.Model)
			return Reply{Status: http.StatusInternalServerError, Error: "script exhausted"}
		}
		r := replies[0]
		replies = replies[1:]
		return r
	}
}

// Planned is a Script for the common shape: requests that carry a `format`
// schema (the hub's planner) get plan, the rest get answer.
func Planned(plan Reply, answer func(req *api.ChatRequest) Reply) Script {
	return func(req *api.ChatRequest) Reply {
		if len(req.Format) > 0 {
			return plan
		}
		return answer(req)
	}
}

func (s *Scripted) tags(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var list api.ListResponse
	for m := range s.models {
		sum := sha256.Sum256([]byte(m))
		list.Models = append(list.Models, api.ListModelResponse{Name: m, Model: m, Digest: hex.EncodeToString(sum[:])})
	}
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(list)
}
