package hub

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/llm"
)

// piecesModel streams its answer in pieces and stops when its context
// ends, as a model server's stream does.
type piecesModel []string

func (p piecesModel) Chat(ctx context.Context, _ llm.Request, onChunk func(llm.Chunk)) (llm.Response, error) {
	var text strings.Builder
	for _, piece := range p {
		if err := ctx.Err(); err != nil {
			return llm.Response{Message: api.Message{Role: "assistant", Content: text.String()}}, err
		}
		text.WriteString(piece)
		if onChunk != nil {
			onChunk(llm.Chunk{Content: piece})
		}
	}
	return llm.Response{Message: api.Message{Role: "assistant", Content: text.String()}}, nil
}

func (piecesModel) Model() string { return "pieces" }

func chatRoute(fn, app string) (string, bool) {
	switch fn {
	case ChatFunctionality:
		return VanillaApp, true
	case "clock.now":
		return "clock", true
	}
	return "", false
}

// A chat plan keeps what its step needs: where the hub holds facts the
// whole plan is read (its first tokens do not end it), and a chat step
// that needs one keeps it; a chat plan that names an app is still chat.
func TestAChatPlanKeepsWhatItNeeds(t *testing.T) {
	in := PlanInput{Query: "when is my trip?", Functionalities: []Functionality{{Name: ChatFunctionality}, {Name: "clock.now"}}, Facts: []string{"trip.dates"}}
	needs := piecesModel{`{"kind":"chat",`, `"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[],"needs":["trip.dates"]}]}`}
	plan, _, err := NewPlanner(needs, nil).Plan(context.Background(), in, chatRoute)
	if err != nil || plan.Early || len(plan.Steps) != 1 || !slices.Equal(plan.Steps[0].Needs, []string{"trip.dates"}) {
		t.Fatalf("the chat step keeps its needs: %+v %v", plan, err)
	}
	app := piecesModel{`{"kind":"chat",`, `"steps":[{"id":"s1","functionality":"clock.now","query":"q","depends_on":[],"needs":["trip.dates"]}]}`}
	plan, _, err = NewPlanner(app, nil).Plan(context.Background(), in, chatRoute)
	if err != nil || len(plan.Steps) != 1 || plan.Steps[0].App != VanillaApp || plan.Steps[0].Query != in.Query {
		t.Fatalf("the kind decides: %+v %v", plan, err)
	}
	// Without facts, the first tokens decide and the rest is not read.
	in.Facts = nil
	plan, _, err = NewPlanner(piecesModel{`{"kind":"chat",`, `garbage that is never read`}, nil).Plan(context.Background(), in, chatRoute)
	if err != nil || !plan.Early || plan.Steps[0].App != VanillaApp {
		t.Fatalf("decided early: %+v %v", plan, err)
	}
}

// The order keeps hosts without the credentials a URL may carry.
func TestTheOrderKeepsNoCredentials(t *testing.T) {
	s := OpenServerOrder("")
	s.update("http://user:secret@127.0.0.1:11434", func(f *serverFacts) { f.SideBySide = true })
	if !s.SideBySide("http://127.0.0.1:11434") || !s.SideBySide("http://other:pw@127.0.0.1:11434") {
		t.Fatal("the same server, whatever credentials name it")
	}
	for k := range s.hosts {
		if strings.Contains(k, "secret") || strings.Contains(k, "user") {
			t.Fatalf("kept with its credentials: %q", k)
		}
	}
}
