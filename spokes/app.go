package spokes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// Gate is the hub's side of one spoke. The hub builds one per spoke, so a
// gate is the spoke's identity: nothing the spoke says about itself is
// believed.
type Gate interface {
	// Authorize decides whether the spoke may call one of its own app's
	// functions with these (schema-valid) arguments. A denial's note is
	// passed to the model.
	Authorize(ctx context.Context, fn apps.Function, args json.RawMessage) (Verdict, error)
	// Request asks the hub for a catalog functionality that another app
	// provides (ISC). The reply is a schema-valid value or an error whose
	// text the model may read.
	Request(ctx context.Context, functionality string, args json.RawMessage) (json.RawMessage, error)
	// Settle is told of every call the gate allowed, once it returned
	// (whatever its outcome): the hub puts what the app's process wrote
	// into the user's folders to the person. It returns words for the
	// model on what became of those changes ("" when there were none).
	Settle(ctx context.Context, fn apps.Function, v Verdict) string
}

// Verdict is a gate's answer to one function call.
type Verdict struct {
	Allowed bool
	Note    string
	// Expected: the call is the one the plan's step expects; only such a
	// call's result becomes the step's typed value.
	Expected bool
}

// Limits of one app task.
const (
	maxRounds   = 16
	callTimeout = 2 * time.Minute
)

// Preamble begins the system prompt of every model call about the apps:
// the app spokes', their upkeep, the synthesis', the detector's. On a
// model server with parallel slots, each caching the prompt it last read
// and a request taking the free slot that shares the longest prefix with
// it, these calls take a slot that holds one of theirs, not the
// planner's nor the conversation's, whose prompts begin with other words
// (hub: the planner's, the plain spoke's).
const Preamble = "You are bulkhead, a helpful assistant running on the user's own machine."

// Identity is how an app spoke's prompt begins: the preamble, then who
// its model is. Its memory upkeep begins alike (hub), so that both share
// a cached prefix.
func Identity(app string) string {
	return Preamble + fmt.Sprintf(" Here you are the assistant for the app %q.", app)
}

// appSystem frames an app spoke's model.
func (s *Spoke) appSystem(m apps.Manifest) string {
	var b strings.Builder
	b.WriteString(Identity(m.Name) + " Use the app's functions to do what the user asks, then answer briefly in plain words.\n")
	b.WriteString("If you need something this app does not do, call request_functionality with the name of a catalog functionality; the user decides whether it is allowed.\n\n")
	fmt.Fprintf(&b, "About the app (written by the app):\n%s\n", m.Description)
	return b.String()
}

// tools lists the app's functions and request_functionality as model tools.
func appTools(m apps.Manifest) (api.Tools, error) {
	var tools api.Tools
	for _, f := range m.Functions {
		t := api.Tool{Type: "function", Function: api.ToolFunction{Name: f.Name, Description: f.Description}}
		if err := json.Unmarshal(f.Params, &t.Function.Parameters); err != nil {
			return nil, fmt.Errorf("%s.%s params: %w", m.Name, f.Name, err)
		}
		tools = append(tools, t)
	}
	rf := api.Tool{Type: "function", Function: api.ToolFunction{
		Name:        apps.RequestFunctionality,
		Description: "Ask bulkhead's hub for a catalog functionality that another app provides. The user is asked first.",
	}}
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"functionality":{"type":"string","description":"catalog name, e.g. drive.read"},"arguments":{"type":"object"}},"required":["functionality","arguments"]}`), &rf.Function.Parameters)
	return append(tools, rf), nil
}

// handleApp runs one task on an app spoke: the model works with the app's
// functions as tools; every call passes the gate; the step's typed value is
// the result of the function mapped to the task's functionality.
func (s *Spoke) handleApp(ctx context.Context, t Task) (Result, error) {
	m := s.cfg.Impl.Manifest()
	tools, err := appTools(m)
	if err != nil {
		return Result{Status: memory.StatusError}, err
	}
	msgs, err := s.contextWith(t, s.appSystem(m))
	if err != nil {
		return Result{Status: memory.StatusError}, err
	}
	it, err := s.logStart(t)
	if err != nil {
		return Result{Status: memory.StatusError}, err
	}
	if s.cfg.Recall && !t.Fresh && !hasFunction(m, RecallTool) {
		tools = append(tools, recallTool())
	}
	mapped := m.Provides[t.Functionality]
	var res Result
	var callErr error
	// answer runs the model's tool calls and hands back what they return.
	answer := func(calls []api.ToolCall) {
		for _, tc := range calls {
			args, _ := json.Marshal(tc.Function.Arguments)
			out, rec := s.invoke(ctx, m, tc.Function.Name, args, t)
			res.Calls = append(res.Calls, rec)
			if rec.Err == "" && rec.Expected && tc.Function.Name == mapped && mapped != "" && res.Value == nil {
				// The step's value is the call the plan expected, never a
				// later one an instruction asked for.
				res.Value = rec.Result
			}
			msgs = append(msgs, api.Message{Role: "tool", ToolName: tc.Function.Name, ToolCallID: tc.ID, Content: string(out)})
		}
	}
	first := 0 // the rounds of calls, the model's and the plan's
	if call, ok := presetCall(t, mapped); ok {
		// The plan bound every argument: the call is made as the model
		// would have made it, and the model reads it in its context.
		first = 1
		msgs = append(msgs, api.Message{Role: "assistant", ToolCalls: []api.ToolCall{call}})
		answer([]api.ToolCall{call})
	}
	for round := first; ; round++ {
		if round > 0 && ctx.Err() != nil {
			callErr = ctx.Err()
			break
		}
		if t.ValueOnly && res.Value != nil {
			// The step's value is made; the answer is the synthesis's.
			res.Text = string(res.Value)
			break
		}
		if round == maxRounds {
			callErr = fmt.Errorf("%s spoke: gave up after %d rounds of function calls", s.cfg.App, maxRounds)
			break
		}
		resp, err := s.cfg.Model.Chat(ctx, llm.Request{Messages: msgs, Tools: tools}, t.OnChunk)
		res.Usage.Add(resp.Usage)
		res.Text, res.Thinking = resp.Message.Content, resp.Message.Thinking
		if err != nil {
			callErr = err
			break
		}
		if len(resp.Message.ToolCalls) == 0 {
			break
		}
		msgs = append(msgs, resp.Message)
		answer(resp.Message.ToolCalls)
	}
	res.Status = StatusOf(ctx, callErr)
	return s.logEnd(ctx, t, it, res, callErr)
}

// presetCall is the task's call when the plan bound all its arguments
// (Task.Args) to the step's own function.
func presetCall(t Task, mapped string) (api.ToolCall, bool) {
	if len(t.Args) == 0 || mapped == "" || t.Function != mapped {
		return api.ToolCall{}, false
	}
	var args api.ToolCallFunctionArguments
	if err := json.Unmarshal(t.Args, &args); err != nil {
		return api.ToolCall{}, false
	}
	return api.ToolCall{ID: "plan-" + t.Functionality, Function: api.ToolCallFunction{Name: mapped, Arguments: args}}, true
}

// invoke runs one tool call and returns what the model reads back.
func (s *Spoke) invoke(ctx context.Context, m apps.Manifest, name string, args json.RawMessage, t Task) (json.RawMessage, CallRecord) {
	if t.OnCall != nil {
		t.OnCall(name, args)
	}
	out, expected, settled, err := s.route(ctx, m, name, args, t)
	if t.OnResult != nil {
		t.OnResult(name, out, err)
	}
	rec := CallRecord{Function: name, Args: args, Result: out, Expected: expected}
	if err != nil {
		rec.Err = err.Error()
		out, _ = json.Marshal(map[string]string{"error": rec.Err})
	}
	if settled != "" {
		// What became of the files it wrote, in the hub's words: the
		// model reads it beside the result, the typed value is the
		// result alone.
		out, _ = json.Marshal(map[string]any{"result": out, "your_file_changes": settled})
	}
	return out, rec
}

// route runs one tool call: recall, a request to the hub for another
// app's functionality, or one of the app's own functions.
func (s *Spoke) route(ctx context.Context, m apps.Manifest, name string, args json.RawMessage, t Task) (json.RawMessage, bool, string, error) {
	if name == RecallTool && s.cfg.Recall && !t.Fresh && !hasFunction(m, RecallTool) {
		out, err := s.recall(args)
		return out, false, "", err
	}
	if name == apps.RequestFunctionality {
		var req struct {
			Functionality string          `json:"functionality"`
			Arguments     json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(args, &req); err != nil || req.Functionality == "" {
			return nil, false, "", errors.New("request_functionality needs {\"functionality\": name, \"arguments\": {...}}")
		}
		if len(req.Arguments) == 0 || string(req.Arguments) == "null" {
			req.Arguments = json.RawMessage("{}")
		}
		out, err := s.cfg.Gate.Request(ctx, req.Functionality, req.Arguments)
		return out, false, "", err
	}
	return s.call(ctx, m, name, args)
}

// Refused is the error of a call the gate did not allow: the model reads
// it as the call's result; the hub says it in the answer.
type Refused struct {
	Function string
	Note     string // why, in the words of the rule, policy or person that decided
}

func (r *Refused) Error() string {
	msg := "the user did not allow " + r.Function
	if r.Note != "" {
		msg += ": " + r.Note
	}
	return msg
}

// Call runs one of the app's own functions after the gate allows it: the
// arguments and the result are checked against the function's schemas, and
// a panicking, hanging or failing app fails only this call. It runs on the
// caller's goroutine; Invoke runs it on the spoke's.
func (s *Spoke) Call(ctx context.Context, m apps.Manifest, name string, args json.RawMessage) (json.RawMessage, error) {
	out, _, _, err := s.call(ctx, m, name, args)
	return out, err
}

// call is Call, also saying whether the gate judged the call the one the
// step expects, and what became of the files it wrote (Gate.Settle).
func (s *Spoke) call(ctx context.Context, m apps.Manifest, name string, args json.RawMessage) (json.RawMessage, bool, string, error) {
	fn, ok := m.Function(name)
	if !ok {
		names := make([]string, 0, len(m.Functions))
		for _, f := range m.Functions {
			names = append(names, f.Name)
		}
		return nil, false, "", fmt.Errorf("there is no function %q; the functions are %s and %s", name, strings.Join(names, ", "), apps.RequestFunctionality)
	}
	if err := apps.Validate(fn.Params, args); err != nil {
		return nil, false, "", fmt.Errorf("arguments of %s: %v", name, err)
	}
	v, err := s.cfg.Gate.Authorize(ctx, fn, args)
	if err != nil {
		return nil, false, "", err
	}
	if !v.Allowed {
		return nil, false, "", &Refused{Function: name, Note: v.Note}
	}
	out, err := s.run(ctx, fn, args)
	// A call that failed may have written before it did.
	settled := s.cfg.Gate.Settle(ctx, fn, v)
	if err != nil {
		return nil, false, settled, err
	}
	if err := apps.Validate(fn.Result, out); err != nil {
		return nil, false, settled, fmt.Errorf("%s returned malformed output (%v); it was dropped", name, err)
	}
	return out, v.Expected, settled, nil
}

// run calls the app with a timeout, turning a panic into an error. Calls
// take turns at the app (Spoke.calling); waiting for the turn honours ctx.
func (s *Spoke) run(ctx context.Context, fn apps.Function, args json.RawMessage) (out json.RawMessage, err error) {
	select {
	case s.calling <- struct{}{}:
	case <-s.stop:
		return nil, ErrStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.calling }()
	limit := s.cfg.CallTimeout
	if limit <= 0 {
		limit = callTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type ret struct {
		out json.RawMessage
		err error
	}
	done := make(chan ret, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- ret{nil, fmt.Errorf("the app crashed in %s: %v", fn.Name, p)}
			}
		}()
		o, e := s.cfg.Impl.Call(ctx, apps.Call{Function: fn.Name, Args: args, Memory: s.cfg.Memory, NotFound: memory.ErrNotFound})
		done <- ret{o, e}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("%s failed: %v", fn.Name, r.err)
		}
		return r.out, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s did not answer within %s", fn.Name, limit)
		}
		return nil, ctx.Err()
	}
}

// Invoke runs one of the app's functions for a request another spoke made
// through the hub (ISC), on the caller's goroutine: it does not wait for
// the spoke's own task, which may itself be waiting on the caller (two
// apps asking each other), only for its turn at the app (Spoke.calling).
// No model is involved: the hub has already validated the arguments. A
// stopped spoke answers ErrStopped.
func (s *Spoke) Invoke(ctx context.Context, function string, args json.RawMessage) (json.RawMessage, error) {
	if s.cfg.Impl == nil {
		return nil, errors.New("the vanilla spoke has no functions")
	}
	select {
	case <-s.stop:
		return nil, ErrStopped
	default:
	}
	return s.Call(ctx, s.cfg.Impl.Manifest(), function, args)
}

// Manifest is the manifest of the spoke's app (zero for vanilla).
func (s *Spoke) Manifest() apps.Manifest {
	if s.cfg.Impl == nil {
		return apps.Manifest{}
	}
	return s.cfg.Impl.Manifest()
}
