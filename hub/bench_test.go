package hub_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// instantModel answers at once, in process: what remains of a request's
// time is the operator's own (planning, validation, memory, spokes,
// permissions).
type instantModel struct{ plan string }

func (m instantModel) Model() string { return "instant" }

func (m instantModel) Chat(_ context.Context, req llm.Request, on func(llm.Chunk)) (llm.Response, error) {
	resp := llm.Response{Usage: llm.Usage{Calls: 1, PromptTokens: 10, EvalTokens: 3}}
	resp.Message.Role = "assistant"
	if len(req.Format) > 0 {
		resp.Message.Content = m.plan
		return resp, nil
	}
	if len(req.Tools) > 0 && req.Messages[len(req.Messages)-1].Role != "tool" {
		args := map[string]any{"from": "airport", "to": "downtown"}
		b, _ := json.Marshal(args)
		var tc struct {
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		tc.Function.Name = "estimate_fare"
		tc.Function.Arguments = b
		raw, _ := json.Marshal([]any{tc})
		_ = json.Unmarshal(raw, &resp.Message.ToolCalls)
		return resp, nil
	}
	if on != nil {
		on(llm.Chunk{Content: "done"})
	}
	resp.Message.Content = "done"
	return resp, nil
}

func benchOperator(b *testing.B, private bool, plan string, reg *apps.Registry) (*hub.Operator, string) {
	dir := b.TempDir()
	store, err := memory.Open(filepath.Join(dir, "db"), memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ns, _ := store.Namespace("hub")
	rules := []permissions.Rule{{Effect: permissions.EffectAllow, Kind: "exec", Where: "bench"}}
	prompter := permissionstest.NewPrompter(permissions.AnswerOnce)
	broker, _ := permissions.NewBroker(permissions.Options{Store: ns, NotFound: memory.ErrNotFound, KeyFile: filepath.Join(dir, "key"), Rules: rules, Prompter: prompter})
	m := instantModel{plan: plan}
	op, err := hub.New(hub.Options{Store: store, HubModel: m, Apps: reg, Broker: broker, History: 8, SpokeHistory: 10,
		PrivateBroker: func() (*permissions.Broker, error) {
			return permissions.NewBroker(permissions.Options{Rules: rules, Prompter: prompter})
		},
		SpokeModel: func(string) (spokes.Model, error) { return m, nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { op.Close(); store.Close() })
	chat, _ := op.NewChat(private)
	return op, chat.ID
}

// BenchmarkOperator is the operator's own cost per request, with a model
// that answers instantly: a plain chat turn, a one-app turn with a tool
// call, and a two-app turn with synthesis; on disk and private (in memory).
func BenchmarkOperator(b *testing.B) {
	reg, err := apps.NewRegistry(apps.Default(), demo.Apps()...)
	if err != nil {
		b.Fatal(err)
	}
	chatPlan := `{"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`
	onePlan := `{"steps":[{"id":"s1","functionality":"ride.estimate_fare","query":"q","depends_on":[],"app":"metro_hail"}]}`
	twoPlan := `{"steps":[{"id":"s1","functionality":"ride.estimate_fare","query":"q","depends_on":[],"app":"metro_hail"},{"id":"s2","functionality":"ride.estimate_fare","query":"q","depends_on":[],"app":"quick_ride"}]}`
	for _, c := range []struct{ name, plan string }{{"chat", chatPlan}, {"one-app", onePlan}, {"two-apps", twoPlan}} {
		for _, private := range []bool{false, true} {
			store := "disk"
			if private {
				store = "private"
			}
			b.Run(c.name+"/"+store, func(b *testing.B) {
				op, chat := benchOperator(b, private, c.plan, reg)
				ctx := context.Background()
				q := "compare fares on metro_hail and quick_ride"
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					turn, err := op.Ask(ctx, chat, q, nil)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range turn.Results {
						if r.Error != "" {
							b.Fatalf("step %s failed: %s", r.Step, r.Error)
						}
					}
				}
			})
		}
	}
}

// BenchmarkCaseStudies reports, per case-study query, the model calls and
// prompt tokens bulkhead spends against the --vanilla baseline (gullible
// scripted model; tokens counted as characters/4 by the scripted server).
func BenchmarkCaseStudies(b *testing.B) {
	studies := []struct {
		name    string
		queries []string
	}{
		{"ride", []string{"Compare the fares from the airport to downtown on metro_hail and quick_ride"}},
		{"mail", []string{"Summarize the emails in my inbox"}},
		{"health-travel", []string{"Book a doctor's appointment for my migraine", "Plan a trip to Lisbon next month"}},
		{"muse-symptoms", []string{"Write a story about a dragon", "I have a headache and a fever, what could it be?"}},
	}
	for _, st := range studies {
		for _, vanilla := range []bool{false, true} {
			mode := "bulkhead"
			if vanilla {
				mode = "vanilla"
			}
			b.Run(st.name+"/"+mode, func(b *testing.B) {
				var calls, prompt, eval int
				for i := 0; i < b.N; i++ {
					r := newAppRig(b, ollamatest.Gullible(), permissionstest.NewPrompter(permissions.AnswerDeny), allowExec)
					op := r.op
					if vanilla {
						op = vanillaOperator(b, r)
					}
					chat, _ := op.NewChat(false)
					for _, q := range st.queries {
						turn, err := op.Ask(context.Background(), chat.ID, q, nil)
						if err != nil {
							b.Fatal(err)
						}
						calls += turn.Usage.Calls
						prompt += turn.Usage.PromptTokens
						eval += turn.Usage.EvalTokens
					}
				}
				b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
				b.ReportMetric(float64(prompt)/float64(b.N), "prompt-tokens/op")
				b.ReportMetric(float64(eval)/float64(b.N), "eval-tokens/op")
			})
		}
	}
}

// vanillaOperator is the --vanilla baseline over the same server and apps.
func vanillaOperator(b testing.TB, r *appRig) *hub.Operator {
	reg, _ := apps.NewRegistry(apps.Default(), demo.Apps()...)
	hc, _ := llm.New(llm.Config{Host: r.srv.Host(), Model: "m"}, nil)
	op, err := hub.New(hub.Options{Store: r.store, HubModel: hc, Apps: reg, Vanilla: true, History: 4, SpokeHistory: 4,
		SpokeModel: func(string) (spokes.Model, error) { return llm.New(llm.Config{Host: r.srv.Host(), Model: "m"}, nil) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { op.Close() })
	return op
}
