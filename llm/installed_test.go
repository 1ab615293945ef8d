package llm_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

func TestInstalledListsModelsWithCapabilities(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, nil, "zeta", "alpha", "old")
	srv.SetCapabilities("zeta", "completion", "tools")
	srv.SetCapabilities("alpha", "completion")
	c := newClient(t, srv.Host(), "zeta")
	got, err := c.Installed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ModelInfo{
		{Name: "alpha", Capabilities: []string{"completion"}},
		{Name: "old"},
		{Name: "zeta", Capabilities: []string{"completion", "tools"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Installed = %+v, want %+v", got, want)
	}
	for _, m := range got {
		if can := m.Can(llm.CapTools); can != (m.Name != "alpha") {
			t.Errorf("%s: Can(tools) = %v", m.Name, can)
		}
	}
}

func TestInstalledUnreachable(t *testing.T) {
	t.Parallel()
	c := newClient(t, "http://127.0.0.1:1", "m")
	if _, err := c.Installed(context.Background()); err == nil {
		t.Fatal("no error from a host where nothing answers")
	} else if _, ok := err.(*llm.UnreachableError); !ok {
		t.Fatalf("error %T %v, want *llm.UnreachableError", err, err)
	}
}

func TestSameModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"llama3.2", "llama3.2:latest", true},
		{"qwen3:1.7b", "qwen3:1.7b", true},
		{"qwen3:1.7b", "qwen3", false},
		{"host:11434/ns/m", "host:11434/ns/m:latest", true},
		{"m", "m2", false},
	} {
		if got := llm.SameModel(c.a, c.b); got != c.same {
			t.Errorf("SameModel(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
