package hub

import (
	"context"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// How a call went is not a fact worth remembering; what the user told or
// an app found is.
func TestNoiseEntities(t *testing.T) {
	for _, c := range []struct {
		k, v  string
		noise bool
	}{
		{"files.truncated", "false", true},
		{"files.created", "true", true},
		{"notes.count", "3", true},
		{"search.status", "ok", true},
		{"trip.confirmed", "yes", true},
		{"contact.alice.email", "alice@example.com", false},
		{"trip.dates", "May 3-7", false},
		{"contact.alice.age", "34", false},
		{"project.name", "bulkhead", false},
	} {
		if got := noiseEntity(c.k, c.v); got != c.noise {
			t.Errorf("%s = %s: noise %v, want %v", c.k, c.v, got, c.noise)
		}
	}
}

// extract keeps the facts a model found and drops the noise among them.
func TestExtractDropsNoise(t *testing.T) {
	st, err := memory.Open(t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ns, err := st.Namespace("spoke/files")
	if err != nil {
		t.Fatal(err)
	}
	m := scriptedModel(`{"entities":[{"key":"files.truncated","value":"false"},{"key":"report.path","value":"reports/q3.txt"},{"key":"files.bytes","value":"48213"}]}`)
	frame := func(task, input string) []api.Message {
		return []api.Message{{Role: "system", Content: task}, {Role: "user", Content: input}}
	}
	es, err := extract(context.Background(), m, frame, ns.LongTerm(), "read reports/q3.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Key != "report.path" {
		t.Fatalf("extracted %+v", es)
	}
}

// scriptedModel answers every call with text.
type scriptedModel string

func (s scriptedModel) Chat(context.Context, llm.Request, func(llm.Chunk)) (llm.Response, error) {
	return llm.Response{Message: api.Message{Role: "assistant", Content: string(s)}}, nil
}

func (s scriptedModel) Model() string { return "scripted" }
