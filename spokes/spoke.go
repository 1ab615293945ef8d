package spokes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// Model is what a spoke needs of its model client: *llm.Client has it.
type Model interface {
	Chat(ctx context.Context, req llm.Request, onChunk func(llm.Chunk)) (llm.Response, error)
	Model() string
}

// ErrStopped is returned by Do once the spoke has been stopped.
var ErrStopped = errors.New("spoke stopped")

// Config builds a spoke.
type Config struct {
	App    string            // the app served; "vanilla" for plain conversation
	Model  Model             // the spoke's own model client
	Memory *memory.Namespace // the spoke's own namespace
	// History is how many of its own past interactions (in this chat)
	// the spoke puts into its context.
	History int
	// System is the spoke's system prompt.
	System string
}

// Task is one request to a spoke.
type Task struct {
	Chat    string
	Query   string
	OnChunk func(llm.Chunk) // streamed answer pieces; may be nil
}

// Result is what a spoke produced for a task. On failure it still holds
// whatever was produced (a cut stream keeps its partial text).
type Result struct {
	Text     string
	Thinking string
	Status   memory.Status
	Usage    llm.Usage
}

// Spoke is one app's isolated worker for one chat.
type Spoke struct {
	cfg   Config
	tasks chan request
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	start sync.Once
}

type request struct {
	ctx   context.Context
	task  Task
	reply chan reply
}

type reply struct {
	res Result
	err error
}

// New builds a spoke; Start runs it.
func New(cfg Config) (*Spoke, error) {
	if cfg.Model == nil || cfg.Memory == nil || cfg.App == "" {
		return nil, errors.New("spoke needs an app name, a model and a memory namespace")
	}
	return &Spoke{cfg: cfg, tasks: make(chan request), stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// App is the app this spoke serves.
func (s *Spoke) App() string { return s.cfg.App }

// Start launches the spoke's goroutine. It is safe to call more than once.
func (s *Spoke) Start() {
	s.start.Do(func() { go s.loop() })
}

// Stop ends the spoke's goroutine after its current task and waits for it.
func (s *Spoke) Stop() {
	s.once.Do(func() { close(s.stop) })
	s.Start() // a never-started spoke still closes done
	<-s.done
}

// Do runs a task on the spoke's goroutine and waits for it.
func (s *Spoke) Do(ctx context.Context, t Task) (Result, error) {
	r := request{ctx: ctx, task: t, reply: make(chan reply, 1)}
	select {
	case s.tasks <- r:
	case <-s.stop:
		return Result{}, ErrStopped
	case <-ctx.Done():
		return Result{Status: memory.StatusCancelled}, ctx.Err()
	}
	// The goroutine watches the same ctx, so it answers promptly once ctx
	// ends; waiting for it keeps the result (and the partial text).
	rep := <-r.reply
	return rep.res, rep.err
}

func (s *Spoke) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case r := <-s.tasks:
			res, err := s.handle(r.ctx, r.task)
			r.reply <- reply{res, err}
		}
	}
}

// handle answers one task: working memory from its own namespace, one
// model call, the interaction logged in its own namespace.
func (s *Spoke) handle(ctx context.Context, t Task) (Result, error) {
	msgs, err := s.context(t)
	if err != nil {
		return Result{Status: memory.StatusError}, err
	}
	it, err := s.cfg.Memory.Append(t.Chat, memory.Interaction{Input: t.Query, Status: memory.StatusPending, Started: time.Now()})
	if err != nil {
		return Result{Status: memory.StatusError}, fmt.Errorf("%s spoke: log the request: %w", s.cfg.App, err)
	}
	resp, callErr := s.cfg.Model.Chat(ctx, llm.Request{Messages: msgs}, t.OnChunk)
	res := Result{Text: resp.Message.Content, Thinking: resp.Message.Thinking, Usage: resp.Usage, Status: statusOf(ctx, callErr)}

	it.Output, it.Status, it.Ended = res.Text, res.Status, time.Now()
	it.Usage = memory.Usage{Calls: resp.Usage.Calls, PromptTokens: resp.Usage.PromptTokens, EvalTokens: resp.Usage.EvalTokens, Duration: resp.Usage.Duration}
	if callErr != nil {
		it.Error = callErr.Error()
	}
	// Log even when the turn was cancelled: the record must not stay
	// pending. A fresh context, since ctx may be done.
	if err := s.cfg.Memory.Update(it); err != nil && callErr == nil {
		return res, fmt.Errorf("%s spoke: log the answer: %w", s.cfg.App, err)
	}
	if callErr != nil {
		return res, callErr
	}
	return res, nil
}

// context builds the model's messages: the system prompt, the last
// History completed interactions of this chat, and the query.
func (s *Spoke) context(t Task) ([]api.Message, error) {
	msgs := []api.Message{}
	if s.cfg.System != "" {
		msgs = append(msgs, api.Message{Role: "system", Content: s.cfg.System})
	}
	if s.cfg.History > 0 {
		// Failed and cut interactions are skipped, so read a few extra.
		past, err := s.cfg.Memory.Recent(t.Chat, 2*s.cfg.History)
		if err != nil {
			return nil, fmt.Errorf("%s spoke: working memory: %w", s.cfg.App, err)
		}
		var ok []memory.Interaction
		for _, it := range past {
			if it.Status == memory.StatusOK {
				ok = append(ok, it)
			}
		}
		if len(ok) > s.cfg.History {
			ok = ok[len(ok)-s.cfg.History:]
		}
		for _, it := range ok {
			msgs = append(msgs, api.Message{Role: "user", Content: it.Input}, api.Message{Role: "assistant", Content: it.Output})
		}
	}
	return append(msgs, api.Message{Role: "user", Content: t.Query}), nil
}

func statusOf(ctx context.Context, err error) memory.Status {
	var cut *llm.StreamCutError
	switch {
	case err == nil:
		return memory.StatusOK
	case ctx.Err() != nil:
		return memory.StatusCancelled
	case errors.As(err, &cut):
		return memory.StatusCut
	default:
		return memory.StatusError
	}
}
