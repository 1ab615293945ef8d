package ollamatest

import (
	"strings"

	"github.com/ollama/ollama/api"
)

// What a scripted model reads of a spoke's request, for scripts of their
// own (the gullible model reads it so too).

// SpokeApp is the app whose spoke sent req ("" when none did: the
// planner, the synthesis, the plain model): the spoke's system prompt
// names it.
func SpokeApp(req *api.ChatRequest) string {
	for _, m := range req.Messages {
		if m.Role == "system" {
			if sm := reSpokeApp.FindStringSubmatch(m.Content); sm != nil {
				return sm[1]
			}
		}
	}
	return ""
}

// PlanArgs are the arguments the plan gives a spoke's request, from its
// user message: literals as they are, bound fields as the data shared
// with the request has them.
func PlanArgs(userMessage string) map[string]any {
	q, shared, _ := strings.Cut(userMessage, "\n\nData the user shared")
	_, bound, _ := strings.Cut(q, "\n\nArguments the plan gives")
	return boundArgs(bound, sharedData(shared))
}

// CallKey names a call by its tool and its arguments: a script that makes
// each call once keeps the keys of those made (the assistant messages'
// tool calls).
func CallKey(name string, args map[string]any) string { return callKey(name, args) }
