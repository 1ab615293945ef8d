package spokes

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// RecallTool is the tool that looks up the spoke's own entities.
const RecallTool = "recall"

// recallLimit bounds the facts one recall returns.
const recallLimit = 8

func recallTool() api.Tool {
	t := api.Tool{Type: "function", Function: api.ToolFunction{
		Name:        RecallTool,
		Description: "Look up facts you noted in earlier conversations with this app (names, dates, ids). Searches your own memory only.",
	}}
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"query":{"type":"string","description":"words to look for"}},"required":["query"]}`), &t.Function.Parameters)
	return t
}

func hasFunction(m apps.Manifest, name string) bool {
	_, ok := m.Function(name)
	return ok
}

// recall searches the spoke's own long-term entities. The only handle it
// uses is the spoke's own namespace: there is no way to name another.
func (s *Spoke) recall(args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, errors.New(`recall needs {"query": "words"}`)
	}
	found, err := s.cfg.Memory.LongTerm().Search(a.Query, recallLimit)
	if err != nil {
		return nil, fmt.Errorf("recall: %v", err)
	}
	type fact struct {
		Key   string    `json:"key"`
		Value string    `json:"value"`
		Time  time.Time `json:"noted"`
	}
	facts := make([]fact, 0, len(found))
	for _, e := range found {
		facts = append(facts, fact{e.Key, e.Value, e.Time})
	}
	return json.Marshal(map[string]any{"facts": facts})
}
