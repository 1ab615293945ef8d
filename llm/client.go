package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
)

// Config is what one owner of a model (the hub, a spoke) is configured with.
type Config struct {
	Host      string        // Ollama base URL; "" means DefaultHost
	Model     string        // model name, e.g. "qwen3:1.7b"
	KeepAlive time.Duration // how long Ollama keeps the model loaded; 0 = server default
	NumCtx    int           // context window; 0 = model default
	Limits    Limits
}

// Limits bound what one model call may grow to; a zero field takes its
// default (DefaultLimits).
type Limits struct {
	// AnswerBytes bounds the text of one answer, content and thinking
	// together.
	AnswerBytes int
	// ToolCalls bounds the tool calls of one answer; ToolArgBytes the
	// arguments of each.
	ToolCalls, ToolArgBytes int
	// Stall is how long a call may go without a byte from the server (the
	// first one included: loading a model counts) before it is given up.
	Stall time.Duration
	// Total bounds a whole call.
	Total time.Duration
}

// DefaultLimits are generous for a local model and small for a machine.
var DefaultLimits = Limits{AnswerBytes: 1 << 20, ToolCalls: 32, ToolArgBytes: 256 << 10, Stall: 2 * time.Minute, Total: 15 * time.Minute}

func (l Limits) orDefault() Limits {
	d := DefaultLimits
	if l.AnswerBytes > 0 {
		d.AnswerBytes = l.AnswerBytes
	}
	if l.ToolCalls > 0 {
		d.ToolCalls = l.ToolCalls
	}
	if l.ToolArgBytes > 0 {
		d.ToolArgBytes = l.ToolArgBytes
	}
	if l.Stall > 0 {
		d.Stall = l.Stall
	}
	if l.Total > 0 {
		d.Total = l.Total
	}
	return d
}

// Client talks to one Ollama host on behalf of one owner.
type Client struct {
	cfg  Config
	base *url.URL
	api  *api.Client
	caps capsCache
}

// New builds a client. httpClient may be nil (a client without an overall
// timeout is used: streams are bounded by their contexts instead).
func New(cfg Config, httpClient *http.Client) (*Client, error) {
	if cfg.Model == "" {
		return nil, errors.New("no model configured")
	}
	base, err := ParseHost(cfg.Host)
	if err != nil {
		return nil, err
	}
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	hc := *httpClient
	base0 := hc.Transport
	if base0 == nil {
		base0 = http.DefaultTransport
	}
	hc.Transport = guarded{base: base0}
	return &Client{cfg: cfg, base: base, api: api.NewClient(base, &hc)}, nil
}

// Model is the model this client asks.
func (c *Client) Model() string { return c.cfg.Model }

// Host is the base URL of the Ollama server.
func (c *Client) Host() string { return c.base.String() }

// Request is one chat call.
type Request struct {
	Messages []api.Message
	// Format is a JSON schema (or "json") the answer must follow.
	Format json.RawMessage
	Tools  api.Tools
	// Think asks a thinking model to think (nil: model default).
	Think   *bool
	Options map[string]any
}

// Usage is what one or more calls cost.
type Usage struct {
	Calls        int           `json:"calls"`
	PromptTokens int           `json:"prompt_tokens"`
	EvalTokens   int           `json:"eval_tokens"`
	Duration     time.Duration `json:"duration_ns"`
	LoadDuration time.Duration `json:"load_duration_ns,omitempty"`
	// PromptDuration is the time the server spent reading the prompts
	// (prompt_eval_duration): a prompt whose prefix the server had cached
	// reads in a fraction of the time (its token count stays the same).
	PromptDuration time.Duration `json:"prompt_eval_ns,omitempty"`
	// BackgroundCalls are calls made apart from a turn's own: the
	// long-term memory upkeep a turn brings due, and its seats (hub).
	BackgroundCalls int `json:"background_calls,omitempty"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.Calls += u2.Calls
	u.PromptTokens += u2.PromptTokens
	u.EvalTokens += u2.EvalTokens
	u.Duration += u2.Duration
	u.LoadDuration += u2.LoadDuration
	u.PromptDuration += u2.PromptDuration
	u.BackgroundCalls += u2.BackgroundCalls
}

// Response is a finished (or, inside a StreamCutError, partial) answer.
type Response struct {
	Model      string
	Message    api.Message // content, thinking and tool calls, accumulated
	DoneReason string
	Usage      Usage
}

// Chunk is one piece of a streamed answer.
type Chunk struct {
	Content  string
	Thinking string
}

// Chat sends one chat request and streams the answer to onChunk (which may
// be nil). It returns the accumulated answer. If ctx ends, the partial
// answer is returned with ctx's error; if the stream breaks, with a
// *StreamCutError.
func (c *Client) Chat(ctx context.Context, req Request, onChunk func(Chunk)) (Response, error) {
	stream := true
	creq := &api.ChatRequest{
		Model:    c.cfg.Model,
		Messages: req.Messages,
		Stream:   &stream,
		Format:   req.Format,
		Tools:    req.Tools,
		Options:  req.Options,
	}
	if c.cfg.KeepAlive != 0 {
		creq.KeepAlive = &api.Duration{Duration: c.cfg.KeepAlive}
	}
	if c.cfg.NumCtx > 0 {
		if creq.Options == nil {
			creq.Options = map[string]any{}
		}
		if _, set := creq.Options["num_ctx"]; !set {
			creq.Options["num_ctx"] = c.cfg.NumCtx
		}
	}
	if req.Think != nil {
		creq.Think = &api.ThinkValue{Value: *req.Think}
	}

	lim := c.cfg.Limits.orDefault()
	start := time.Now()
	var (
		resp    = Response{Model: c.cfg.Model}
		content strings.Builder
		think   strings.Builder
		done    bool
		chunks  int
	)
	resp.Message.Role = "assistant"
	// A watchdog gives the call up when the server sends nothing for
	// lim.Stall (a stalled stream), or when the whole call passes
	// lim.Total; each chunk resets it.
	outer := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Total, &LimitError{What: "the model call", Limit: lim.Total.String(), Key: "limits.call_timeout"})
	defer cancel()
	callCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	callCtx, guard := withGuard(callCtx, lim)
	stalled := &StalledError{After: lim.Stall}
	watchdog := time.AfterFunc(lim.Stall, func() { stop(stalled) })
	defer watchdog.Stop()
	err := c.api.Chat(callCtx, creq, func(r api.ChatResponse) error {
		watchdog.Reset(lim.Stall)
		chunks++
		content.WriteString(r.Message.Content)
		think.WriteString(r.Message.Thinking)
		if n := content.Len() + think.Len(); n > lim.AnswerBytes {
			return &LimitError{What: "the answer", Got: fmt.Sprintf("over %d bytes", lim.AnswerBytes), Limit: fmt.Sprint(lim.AnswerBytes, " bytes"), Key: "limits.answer_bytes"}
		}
		for _, tc := range r.Message.ToolCalls {
			if b, _ := json.Marshal(tc.Function.Arguments); len(b) > lim.ToolArgBytes {
				return &LimitError{What: "the arguments of a tool call (" + clipName(tc.Function.Name) + ")", Got: fmt.Sprint(len(b), " bytes"), Limit: fmt.Sprint(lim.ToolArgBytes, " bytes"), Key: "limits.tool_arg_bytes"}
			}
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, r.Message.ToolCalls...)
		if len(resp.Message.ToolCalls) > lim.ToolCalls {
			return &LimitError{What: "the tool calls of one answer", Got: fmt.Sprint(len(resp.Message.ToolCalls)), Limit: fmt.Sprint(lim.ToolCalls), Key: "limits.tool_calls_per_answer"}
		}
		if onChunk != nil && (r.Message.Content != "" || r.Message.Thinking != "") {
			onChunk(Chunk{Content: r.Message.Content, Thinking: r.Message.Thinking})
		}
		if r.Done {
			done = true
			resp.DoneReason = r.DoneReason
			resp.Usage = Usage{
				Calls:          1,
				PromptTokens:   r.PromptEvalCount,
				EvalTokens:     r.EvalCount,
				LoadDuration:   r.LoadDuration,
				PromptDuration: r.PromptEvalDuration,
			}
		}
		return nil
	})
	resp.Message.Content = content.String()
	resp.Message.Thinking = think.String()
	resp.Usage.Calls = 1
	resp.Usage.Duration = time.Since(start)

	var limit *LimitError
	switch {
	case outer.Err() != nil:
		return resp, outer.Err()
	case errors.As(context.Cause(callCtx), &stalled):
		return resp, &StreamCutError{Partial: resp, Err: stalled}
	case errors.As(context.Cause(ctx), &limit):
		return resp, &StreamCutError{Partial: resp, Err: limit}
	case errors.As(err, &limit):
		return resp, &StreamCutError{Partial: resp, Err: limit}
	case errors.As(guard.failed(), &limit):
		return resp, &StreamCutError{Partial: resp, Err: limit}
	case err != nil:
		return resp, c.classify(err, chunks > 0, resp)
	case !done:
		return resp, &StreamCutError{Partial: resp}
	}
	return resp, nil
}

// clipName bounds a tool name an answer gave, for a message.
func clipName(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// classify turns a transport or API error into one of the package's types.
func (c *Client) classify(err error, started bool, partial Response) error {
	var se api.StatusError
	if errors.As(err, &se) {
		if se.StatusCode == http.StatusNotFound && strings.Contains(strings.ToLower(se.ErrorMessage), "not found") {
			return &ModelMissingError{Model: c.cfg.Model, Host: c.base.String()}
		}
		return fmt.Errorf("ollama at %s: %w", c.base, err)
	}
	if started {
		return &StreamCutError{Partial: partial, Err: err}
	}
	if isConnError(err) {
		return &UnreachableError{Host: c.base.String(), Err: err}
	}
	return fmt.Errorf("ollama at %s: %w", c.base, err)
}

func isConnError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &oe) || (errors.As(err, &ne) && ne.Timeout())
}

// Version asks the server for its version; an unreachable server gives an
// *UnreachableError.
func (c *Client) Version(ctx context.Context) (string, error) {
	v, err := c.api.Version(ctx)
	if err != nil {
		if isConnError(err) {
			return "", &UnreachableError{Host: c.base.String(), Err: err}
		}
		return "", fmt.Errorf("ollama at %s: %w", c.base, err)
	}
	return v, nil
}

// HasModel reports whether the server has the model.
func (c *Client) HasModel(ctx context.Context, model string) (bool, error) {
	_, err := c.api.Show(ctx, &api.ShowRequest{Model: model})
	if err == nil {
		return true, nil
	}
	var se api.StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if isConnError(err) {
		return false, &UnreachableError{Host: c.base.String(), Err: err}
	}
	return false, fmt.Errorf("ollama at %s: show %q: %w", c.base, model, err)
}

// Load has the server load model now (an empty generate request), kept
// for the client's keep-alive, so that a later call does not carry the
// load: `bulkhead bench` loads each model before it times it.
func (c *Client) Load(ctx context.Context, model string) error {
	req := &api.GenerateRequest{Model: model}
	if c.cfg.KeepAlive != 0 {
		req.KeepAlive = &api.Duration{Duration: c.cfg.KeepAlive}
	}
	err := c.api.Generate(ctx, req, func(api.GenerateResponse) error { return nil })
	if err != nil && isConnError(err) {
		return &UnreachableError{Host: c.base.String(), Err: err}
	}
	return err
}

// Progress is one step of a pull.
type Progress struct {
	Status           string
	Completed, Total int64
}

// Pull downloads a model, reporting progress to fn (which may be nil).
func (c *Client) Pull(ctx context.Context, model string, fn func(Progress)) error {
	err := c.api.Pull(ctx, &api.PullRequest{Model: model}, func(p api.ProgressResponse) error {
		if fn != nil {
			fn(Progress{Status: p.Status, Completed: p.Completed, Total: p.Total})
		}
		return nil
	})
	if err != nil {
		if isConnError(err) {
			return &UnreachableError{Host: c.base.String(), Err: err}
		}
		return fmt.Errorf("pull %q from %s: %w", model, c.base, err)
	}
	return nil
}
