package llm

import (
	"slices"
	"testing"
)

// A server bulkhead starts runs with parallel slots, unless the user's
// environment says otherwise.
func TestTheStartedServerHasParallelSlots(t *testing.T) {
	env := serverEnv([]string{"PATH=/bin"}, "127.0.0.1:11434")
	if !slices.Contains(env, "OLLAMA_NUM_PARALLEL=3") || !slices.Contains(env, "OLLAMA_HOST=127.0.0.1:11434") {
		t.Fatalf("env %v", env)
	}
	env = serverEnv([]string{"OLLAMA_NUM_PARALLEL=1"}, "h:1")
	if slices.Contains(env, "OLLAMA_NUM_PARALLEL=3") {
		t.Fatalf("the user's setting is kept: %v", env)
	}
}

// A server bulkhead starts keeps each kind of prompt's prefix in a slot
// of its own (the multi-user cache), unless the user's environment says
// otherwise.
func TestTheStartedServerKeepsPrefixes(t *testing.T) {
	if env := serverEnv([]string{"PATH=/bin"}, "h:1"); !slices.Contains(env, "OLLAMA_MULTIUSER_CACHE=1") {
		t.Fatalf("env %v", env)
	}
	env := serverEnv([]string{"OLLAMA_MULTIUSER_CACHE=0"}, "h:1")
	if slices.Contains(env, "OLLAMA_MULTIUSER_CACHE=1") || !slices.Contains(env, "OLLAMA_MULTIUSER_CACHE=0") {
		t.Fatalf("the user's setting is kept: %v", env)
	}
}
