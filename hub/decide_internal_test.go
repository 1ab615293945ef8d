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

// Kind chat is plain conversation: it needs no functionality and no fact,
// so its first tokens decide whether or not the hub holds facts (the rest
// is not read: a step's needs under it are dropped); a chat step that needs
// a fact is kind apps and keeps what it needs.
func TestAChatPlanDecidesWithFactsHeld(t *testing.T) {
	in := PlanInput{Query: "when is my trip?", Functionalities: []Functionality{{Name: ChatFunctionality}, {Name: "clock.now"}}, Facts: []string{"trip.dates"}}
	for _, facts := range [][]string{{"trip.dates"}, nil} {
		in.Facts = facts
		for _, rest := range []string{
			`garbage that is never read`,
			`"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[],"needs":["trip.dates"]}]}`,
			`"steps":[{"id":"s1","functionality":"clock.now","query":"q","depends_on":[],"needs":["trip.dates"]}]}`,
		} {
			plan, _, err := NewPlanner(piecesModel{`{"kind":"chat",`, rest}, nil).Plan(context.Background(), in, chatRoute)
			if err != nil || !plan.Early || len(plan.Steps) != 1 || plan.Steps[0].App != VanillaApp || len(plan.Steps[0].Needs) != 0 || plan.Steps[0].Query != in.Query {
				t.Fatalf("facts %v, %s: decided early, plain chat: %+v %v", facts, rest, plan, err)
			}
			// Parsed whole (as a retry's answer or a cut stream is), the
			// kind decides the same.
			if rest[0] != '"' {
				continue
			}
			plan, err = parsePlan(`{"kind":"chat",`+rest, chatRoute, nil, []string{"trip.dates"}, in.env())
			if err != nil || len(plan.Steps) != 1 || plan.Steps[0].App != VanillaApp || len(plan.Steps[0].Needs) != 0 || plan.Steps[0].Query != in.Query {
				t.Fatalf("facts %v, %s parsed whole: plain chat: %+v %v", facts, rest, plan, err)
			}
		}
	}
	in.Facts = []string{"trip.dates"}
	needs := piecesModel{`{"kind":"apps",`, `"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[],"needs":["trip.dates"]}]}`}
	plan, _, err := NewPlanner(needs, nil).Plan(context.Background(), in, chatRoute)
	if err != nil || plan.Early || len(plan.Steps) != 1 || plan.Steps[0].App != VanillaApp || !slices.Equal(plan.Steps[0].Needs, []string{"trip.dates"}) {
		t.Fatalf("a chat step that needs a fact keeps it: %+v %v", plan, err)
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
