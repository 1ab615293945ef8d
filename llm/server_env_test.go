package llm

import (
	"slices"
	"strings"
	"testing"
)

// A server bulkhead starts runs with parallel slots, unless the user's
// environment says otherwise.
func TestTheStartedServerHasParallelSlots(t *testing.T) {
	env := serverEnv([]string{"PATH=/bin"}, "127.0.0.1:11434")
	if !slices.Contains(env, "OLLAMA_NUM_PARALLEL=3") || !slices.Contains(env, "OLLAMA_HOST=127.0.0.1:11434") {
		t.Fatalf("env %v", env)
	}
	// Not the multi-user cache: copying a prefix between slots aborts the
	// runner of llama.cpp-engine models in the Ollama this is built for.
	for _, kv := range env {
		if strings.HasPrefix(kv, "OLLAMA_MULTIUSER_CACHE") {
			t.Fatalf("env %v", env)
		}
	}
	env = serverEnv([]string{"OLLAMA_NUM_PARALLEL=1"}, "h:1")
	if slices.Contains(env, "OLLAMA_NUM_PARALLEL=3") {
		t.Fatalf("the user's setting is kept: %v", env)
	}
}
