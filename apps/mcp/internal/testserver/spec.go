package main

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources of -spec.
const (
	HelloURI   = "test://notes/hello"
	HelloText  = "hello from a resource"
	BlobURI    = "test://notes/pixel.png"
	BigURI     = "test://notes/big"
	WhoamiURI  = "test://whoami"
	SecretText = "a resource only its own server serves"
)

// taskSupport is what -spec's tools/list says of a tool's execution
// (go-sdk's Tool has no field for it: listed adds it to the answer).
var taskSupport = map[string]string{"research": "required", "maybe_task": "optional"}

// addSpec adds what -spec serves.
func addSpec(s *sdk.Server) {
	read := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: no()}
	s.AddTool(&sdk.Tool{Name: "research", Description: "Research a topic (runs only as a task).", InputSchema: textArg, Annotations: read},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			// As a server of the spec does for a plain call of a tool
			// that requires tasks.
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "research requires task augmentation"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "maybe_task", Description: "May run as a task, or plainly.", InputSchema: textArg, Annotations: read},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(r.Params.Arguments, &in)
			return text("done plainly: " + in.Text), nil
		})
	s.AddTool(&sdk.Tool{Name: "ask_sampling", Description: "Ask the client's model for a message (sampling).", InputSchema: noArgs, Annotations: read},
		func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if len(r.Params.InputResponses) > 0 {
				return text("sampled"), nil
			}
			// Asked as the protocol has it (inputRequests, 2026-07-28;
			// the SDK asks an older client directly).
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"sample": &sdk.CreateMessageParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "link", Description: "Return a resource link and an embedded resource.", InputSchema: noArgs, Annotations: read},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "Here is a note:"},
				&sdk.ResourceLink{URI: HelloURI, Name: "hello note", MIMEType: "text/plain"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://notes/embedded", MIMEType: "text/plain", Text: "embedded note text"}},
			}}, nil
		})
	textOf := func(uri, body string) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	s.AddResource(&sdk.Resource{URI: HelloURI, Name: "hello note", MIMEType: "text/plain"}, textOf(HelloURI, HelloText))
	s.AddResource(&sdk.Resource{URI: BlobURI, Name: "a pixel", MIMEType: "image/png"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: BlobURI, MIMEType: "image/png", Blob: []byte("\x89PNG fake")}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: WhoamiURI, Name: "which process serves it"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: WhoamiURI, Text: instance}}}, nil
	})
	s.AddResource(&sdk.Resource{URI: BigURI, Name: "a big note", MIMEType: "text/plain"}, textOf(BigURI, strings.Repeat("z", 300<<10)))
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://secret/{name}", Name: "secrets"},
		func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: SecretText + " (" + r.Params.URI + ")"}}}, nil
		})
	for _, name := range []string{"greet", "summarize"} {
		s.AddPrompt(&sdk.Prompt{Name: name, Description: "A prompt (" + name + ")."},
			func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: name}}}}, nil
			})
	}
	s.AddReceivingMiddleware(listed)
}

// listedTools is a tools/list answer with each tool's execution.
type listedTools struct {
	sdk.ResultBase
	NextCursor string            `json:"nextCursor,omitempty"`
	Tools      []json.RawMessage `json:"tools"`
}

// listed adds execution.taskSupport to the tools/list answer.
func listed(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		l, ok := res.(*sdk.ListToolsResult)
		if err != nil || method != "tools/list" || !ok {
			return res, err
		}
		out := &listedTools{NextCursor: l.NextCursor}
		for _, t := range l.Tools {
			b, err := json.Marshal(t)
			if err != nil {
				return nil, err
			}
			if ts, ok := taskSupport[t.Name]; ok {
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					return nil, err
				}
				m["execution"] = map[string]string{"taskSupport": ts}
				if b, err = json.Marshal(m); err != nil {
					return nil, err
				}
			}
			out.Tools = append(out.Tools, b)
		}
		return out, nil
	}
}
