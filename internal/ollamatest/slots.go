package ollamatest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// SlotModel makes a scripted server behave, in time and in its prompt
// cache, as Ollama does with a fixed number of parallel slots: each slot
// keeps the tokens of its last request; a request takes the free slot
// whose tokens share the longest prefix with its prompt (the first such
// slot on a tie, as Ollama's runner does without OLLAMA_MULTIUSER_CACHE),
// waits while every slot is busy, reads the tokens past the shared prefix
// at Prefill each, and writes each piece of its answer at Decode (tool
// calls, which come whole, at Decode per four characters).
//
// MultiUser models OLLAMA_MULTIUSER_CACHE=1 instead (findBestCacheSlot):
// a request reuses a free slot whose whole cached prompt begins its own;
// else it takes the free slot used longest ago, into which the longest
// shared prefix of any slot is copied first (no prefill for it).
type SlotModel struct {
	Slots           int
	Prefill, Decode time.Duration
	MultiUser       bool
}

// SlotUse is what one request found: the slot it took, how many of its
// prompt's tokens were cached there, how many it read, and whether its
// prompt was a planner's (its format names "steps").
type SlotUse struct {
	Slot, Cached, Read int
	Plan               bool
	// Evicted is how many tokens of the slot's former prompt were lost.
	Evicted int
	// Request is the request that took the slot (the order of SlotUses
	// is the order slots were taken, which two requests that came
	// together may not share with Requests).
	Request api.ChatRequest
}

type slotState struct {
	mu    sync.Mutex
	cond  *sync.Cond
	model SlotModel
	slots [][]string
	busy  []bool
	used  []int // when each slot was last taken (a count of requests)
	n     int
	uses  []SlotUse
}

// Slotted wraps s's chat handler with the slot model m.
func (s *Scripted) Slotted(m SlotModel) {
	if m.Slots <= 0 {
		m.Slots = 1
	}
	st := &slotState{model: m, slots: make([][]string, m.Slots), busy: make([]bool, m.Slots), used: make([]int, m.Slots)}
	st.cond = sync.NewCond(&st.mu)
	s.mu.Lock()
	s.slots = st
	s.mu.Unlock()
	s.OnChat(func(w http.ResponseWriter, r *http.Request, body []byte, h http.Handler) {
		var req api.ChatRequest
		_ = json.Unmarshal(body, &req)
		prompt := PromptTokens(&req)
		slot, use := st.take(r, prompt, IsPlanner(&req), req)
		if slot < 0 {
			return // the client went away while it waited
		}
		var once sync.Once
		free := func() { once.Do(func() { st.release(slot) }) }
		defer free()
		// The final line reports the prompt as Ollama's runner does: every
		// token counted, the time spent on those it read (a nominal
		// microsecond each when the model spends none).
		per := m.Prefill
		if per <= 0 {
			per = time.Microsecond
		}
		ctx := context.WithValue(r.Context(), promptMetricsKey{}, api.Metrics{PromptEvalCount: len(prompt), PromptEvalDuration: time.Duration(use.Read) * per})
		h.ServeHTTP(&pacedWriter{ResponseWriter: w, decode: m.Decode, done: free}, r.WithContext(ctx))
	})
}

// slotModel is the slot model Slotted set, nil if none.
func (s *Scripted) slotModel() *slotState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slots
}

// SlotUses returns what each request found, in the order they took a slot.
func (s *Scripted) SlotUses() []SlotUse {
	st := s.slotModel()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]SlotUse(nil), st.uses...)
}

// WaitSlotsFree waits until no request holds a slot: a stream whose
// client went away is let go by the server a moment later (as a real
// server's is), so a test that orders its next request by where it goes
// waits for it first.
func (s *Scripted) WaitSlotsFree() {
	st := s.slotModel()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for slices.Contains(st.busy, true) {
		st.cond.Wait()
	}
}

// PromptTokens is the prompt of req as the slot model counts it: each
// message a role marker and its words, the tools offered after the first
// message (as a template that lists them in the system prompt renders
// them: a token per four characters of their JSON), then the format's.
func PromptTokens(req *api.ChatRequest) []string {
	var out []string
	for i, m := range req.Messages {
		out = append(out, "<"+m.Role+">")
		out = append(out, strings.Fields(m.Content)...)
		if i == 0 && len(req.Tools) > 0 {
			b, _ := json.Marshal(req.Tools)
			out = append(out, "<tools>")
			for len(b) > 4 {
				out = append(out, string(b[:4]))
				b = b[4:]
			}
			out = append(out, string(b))
		}
	}
	if len(req.Format) > 0 {
		out = append(out, "<format>", string(req.Format))
	}
	return out
}

func common(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// promptMetricsKey carries a slotted request's prompt metrics to the
// handler that writes its final line.
type promptMetricsKey struct{}

// Reload empties every slot, as loading the model again does (its keep
// alive ran out, or the server restarted).
func (s *Scripted) Reload() {
	s.mu.Lock()
	st := s.slots
	s.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.slots {
		st.slots[i] = nil
	}
}

// take waits for a free slot, takes the one with the longest shared
// prefix, and spends the prefill of what it does not share.
func (st *slotState) take(r *http.Request, prompt []string, plan bool, req api.ChatRequest) (int, SlotUse) {
	st.mu.Lock()
	// A waiter whose client went away is woken to leave (it takes no slot).
	stop := context.AfterFunc(r.Context(), func() {
		st.mu.Lock()
		st.cond.Broadcast()
		st.mu.Unlock()
	})
	defer stop()
	for {
		if r.Context().Err() != nil {
			st.mu.Unlock()
			return -1, SlotUse{}
		}
		best, longest := st.pick(prompt)
		if best >= 0 {
			st.n++
			st.used[best] = st.n
			st.busy[best] = true
			use := SlotUse{Slot: best, Cached: longest, Read: len(prompt) - longest, Plan: plan, Evicted: len(st.slots[best]) - common(st.slots[best], prompt), Request: req}
			st.slots[best] = prompt
			st.uses = append(st.uses, use)
			st.mu.Unlock()
			select {
			case <-time.After(time.Duration(use.Read) * st.model.Prefill):
			case <-r.Context().Done():
			}
			return best, use
		}
		st.cond.Wait()
	}
}

// pick is the slot a request takes (-1: none is free) and how many of
// its prompt's tokens are cached there.
func (st *slotState) pick(prompt []string) (int, int) {
	if !st.model.MultiUser {
		best, longest := -1, -1
		for i := range st.slots {
			if st.busy[i] {
				continue
			}
			if n := common(st.slots[i], prompt); n > longest {
				best, longest = i, n
			}
		}
		return best, longest
	}
	// OLLAMA_MULTIUSER_CACHE: the longest prefix among all slots, busy or
	// not; reused in place only when the slot is free and holds nothing
	// else; otherwise the oldest free slot, with that prefix copied in.
	longSlot, longest, oldest := -1, -1, -1
	for i := range st.slots {
		if n := common(st.slots[i], prompt); n > longest {
			longSlot, longest = i, n
		}
		if !st.busy[i] && (oldest < 0 || st.used[i] < st.used[oldest]) {
			oldest = i
		}
	}
	if !st.busy[longSlot] && longest == len(st.slots[longSlot]) {
		return longSlot, longest
	}
	return oldest, longest
}

func (st *slotState) release(slot int) {
	st.mu.Lock()
	st.busy[slot] = false
	st.cond.Broadcast()
	st.mu.Unlock()
}

// pacedWriter spends the decode time of each piece written, and lets
// the slot go (done) before the final line, as a server does that ends
// its sequence and then says so: a request sent once the client has that
// line finds the slot free.
type pacedWriter struct {
	http.ResponseWriter
	decode time.Duration
	done   func()
}

func (p *pacedWriter) Write(b []byte) (int, error) {
	if p.done != nil && bytes.Contains(b, []byte(`"done":true`)) {
		p.done()
	}
	if p.decode > 0 {
		n := 1
		// Tool calls come whole in the last line; a model writes them a
		// token (about four characters) at a time.
		if i := bytes.Index(b, []byte(`"tool_calls"`)); i >= 0 {
			if end := bytes.Index(b[i:], []byte(`]`)); end > 0 {
				n += end / 4
			}
		}
		time.Sleep(time.Duration(n) * p.decode)
	}
	return p.ResponseWriter.Write(b)
}

func (p *pacedWriter) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
