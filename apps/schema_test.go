package apps_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func TestSchemaRefsCannotReadFiles(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600)
	schema := json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"file://` + secret + `"}}}`)
	if _, err := apps.Compile(schema); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("a file $ref must be refused, got %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	s := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	for in, ok := range map[string]bool{`{"n":1}`: true, `{"n":"1"}`: false, `{}`: false, `not json`: false} {
		if err := apps.Validate(s, json.RawMessage(in)); (err == nil) != ok {
			t.Errorf("Validate(%s) = %v, want ok=%v", in, err, ok)
		}
	}
	var v struct{ N int }
	f := apps.Function{Name: "f", Params: s}
	if err := apps.DecodeArgs(f, json.RawMessage(`{"n":2,"extra":1}`), &v); err == nil {
		t.Error("DecodeArgs accepted an unknown field")
	}
	if err := apps.DecodeArgs(f, json.RawMessage(`{"n":2}`), &v); err != nil || v.N != 2 {
		t.Errorf("DecodeArgs: %v %+v", err, v)
	}
}

func TestDispatch(t *testing.T) {
	t.Parallel()
	m := apps.Manifest{Functions: []apps.Function{
		{Name: "twice", Params: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		{Name: "declared_only", Params: json.RawMessage(`{"type":"object"}`)},
	}}
	h := map[string]apps.Handler{
		"twice": apps.Typed(func(_ context.Context, _ apps.Call, p struct{ N int }) (any, error) {
			return map[string]int{"n": 2 * p.N}, nil
		}),
		"undeclared": func(context.Context, apps.Call, apps.Function) (any, error) { return "ran", nil },
	}
	out, err := apps.Dispatch(context.Background(), m, h, apps.Call{Function: "twice", Args: json.RawMessage(`{"n":21}`)})
	if err != nil || string(out) != `{"n":42}` {
		t.Fatalf("twice: %s %v", out, err)
	}
	for _, fn := range []string{"declared_only", "undeclared", "nope"} {
		if _, err := apps.Dispatch(context.Background(), m, h, apps.Call{Function: fn}); err == nil || !strings.Contains(err.Error(), "no function") {
			t.Errorf("%s: want no function, got %v", fn, err)
		}
	}
	if _, err := apps.Dispatch(context.Background(), m, h, apps.Call{Function: "twice", Args: json.RawMessage(`{"n":1,"x":2}`)}); err == nil {
		t.Error("unknown argument accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := apps.Dispatch(ctx, m, h, apps.Call{Function: "twice", Args: json.RawMessage(`{"n":1}`)}); err == nil {
		t.Error("an ended context must stop the call")
	}
}
