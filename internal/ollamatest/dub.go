package ollamatest

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/ollama/ollama/api"
)

// Dub makes the scripted server speak at a real server's pace: each chat
// request goes, as it came (its messages, tools and format), to the
// model named model on real, told to write as many tokens as the
// scripted reply has (a token per four characters, tool calls included);
// each piece the real model writes back is sent as the next piece of the
// scripted reply, and the last line carries the real server's counters
// with the scripted tool calls. So the time is the real server's — its
// prompt cache, its slots, its prefill and decoding, its grammar — and
// the words are the script's: a shape that needs a correct plan runs on a
// real server whose model cannot plan. Replies with an error status, and
// the special replies (cut, garbage, hang, endless), are not dubbed.
func (s *Scripted) Dub(real *api.Client, model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dub = &dubbing{client: real, model: model}
}

type dubbing struct {
	client *api.Client
	model  string
}

// dubbable reports whether reply is one Dub speaks.
func dubbable(r Reply) bool {
	return r.Status == 0 && r.CutAfter == 0 && r.GarbageAfter == 0 && !r.Hang && !r.Endless
}

// Pieces is r with its content in pieces of about a token (four
// characters) each, as a model streams it.
func Pieces(r Reply) Reply {
	var out []string
	for _, c := range r.Chunks {
		for len(c) > 4 {
			out = append(out, c[:4])
			c = c[4:]
		}
		if c != "" {
			out = append(out, c)
		}
	}
	r.Chunks = out
	return r
}

// tokenPieces is reply's content in pieces of about a token, and how many
// tokens it has in all, tool calls included.
func tokenPieces(r Reply) ([]string, int) {
	out := Pieces(r).Chunks
	n := len(out)
	if len(r.ToolCalls) > 0 {
		b, _ := json.Marshal(r.ToolCalls)
		n += len(b)/4 + 1
	}
	return out, max(n, 1)
}

// dubbed answers req with reply at the real server's pace.
func (d *dubbing) dubbed(w http.ResponseWriter, r *http.Request, req api.ChatRequest, reply Reply) {
	pieces, n := tokenPieces(reply)
	if limit, ok := req.Options["num_predict"].(float64); ok && limit > 0 && int(limit) < n {
		n = int(limit)
		pieces = pieces[:min(n, len(pieces))]
	}
	fwd := req
	fwd.Model = d.model
	fwd.Options = map[string]any{}
	for k, v := range req.Options {
		fwd.Options[k] = v
	}
	fwd.Options["num_predict"] = n
	stream := true
	fwd.Stream = &stream

	w.Header().Set("Content-Type", "application/x-ndjson")
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	send := func(resp api.ChatResponse) error {
		resp.Model, resp.CreatedAt = req.Model, time.Now()
		if err := enc.Encode(resp); err != nil {
			return err
		}
		if fl != nil {
			fl.Flush()
		}
		return nil
	}
	next := 0
	piece := func() string {
		if next >= len(pieces) {
			return ""
		}
		next++
		return pieces[next-1]
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	finish := func(m api.Metrics) error {
		for p := piece(); p != ""; p = piece() {
			if err := send(api.ChatResponse{Message: api.Message{Role: "assistant", Content: p}}); err != nil {
				return err
			}
		}
		m.EvalCount = n
		return send(api.ChatResponse{Message: api.Message{Role: "assistant", ToolCalls: reply.ToolCalls}, Done: true, DoneReason: "stop", Metrics: m})
	}
	done := false
	err := d.client.Chat(ctx, &fwd, func(resp api.ChatResponse) error {
		if !resp.Done {
			if p := piece(); p != "" {
				return send(api.ChatResponse{Message: api.Message{Role: "assistant", Content: p}})
			}
			return nil
		}
		// The real model stopped: what the script has left comes now.
		done = true
		return finish(resp.Metrics)
	})
	switch {
	case err != nil && r.Context().Err() == nil:
		_ = enc.Encode(map[string]string{"error": "dubbed: " + err.Error()})
	case err == nil && !done:
		// The real server ended the stream unmarked: Ollama stops a model
		// that writes one token 30 times over (its repeat limit), as the
		// tiny model's random weights do on some prompts, without a
		// final message. The model wrote what it would: the script's
		// reply ends here.
		_ = finish(api.Metrics{})
	}
}
