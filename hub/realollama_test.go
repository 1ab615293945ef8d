package hub_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// The `format` schemas of memory (summary, entities, the model detector,
// a plan with needs) are accepted by a real Ollama, and what it writes
// under them decodes. Skipped without an ollama binary (see StartReal).
func TestMemorySchemasOnRealOllama(t *testing.T) {
	real := ollamatest.StartReal(t)
	c, err := llm.New(llm.Config{Host: real.Host, Model: real.Model}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fns := []hub.Functionality{{Name: "chat", Description: "talk"}, {Name: "travel.plan_trip", Description: "trips"}}
	for name, schema := range map[string]json.RawMessage{
		"summary":         hub.SummarySchemaForTest,
		"entities":        hub.ExtractSchemaForTest,
		"detector":        hub.DetectorSchemaForTest,
		"plan with needs": hub.PlanSchemaWithFactsForTest(fns, []string{"trip.dates", "user.name"}),
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			resp, err := c.Chat(ctx, llm.Request{
				Messages: []api.Message{{Role: "user", Content: "remember: my name is Ada"}},
				Format:   schema,
				// As in the root integration test: sampling with a repeat
				// penalty keeps the random weights from looping.
				Options: map[string]any{"num_predict": 1500, "temperature": 1.0, "seed": 7, "repeat_penalty": 1.8, "repeat_last_n": 64},
			}, nil)
			if err != nil {
				t.Fatalf("the server refused the %s schema: %v", name, err)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(resp.Message.Content), &v); err != nil {
				t.Fatalf("output under the %s schema is not JSON: %v\n%s", name, err, resp.Message.Content)
			}
		})
	}
}
