package apps_test

import (
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
