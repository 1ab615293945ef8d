package setup

import "testing"

// TestSetupWords: where the host came from, how to start Ollama there,
// and whether a pull's error looks like no network.
func TestSetupWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ from, want string }{
		{"default", "the default host"},
		{"--ollama-host", "set by --ollama-host"},
		{"$OLLAMA_HOST", "set by $OLLAMA_HOST"},
		{"/etc/bulkhead.yaml", "set by ollama.host in /etc/bulkhead.yaml"},
		{"", ""},
	} {
		if got := hostFrom(tc.from); got != tc.want {
			t.Errorf("hostFrom(%q) = %q, want %q", tc.from, got, tc.want)
		}
	}
	for _, tc := range []struct{ host, want string }{
		{"", "ollama serve"},
		{"http://127.0.0.1:11434", "ollama serve"},
		{"localhost", "ollama serve"},
		{"127.0.0.1:18555", "OLLAMA_HOST=127.0.0.1:18555 ollama serve"},
	} {
		if got := serveCommand(tc.host); got != tc.want {
			t.Errorf("serveCommand(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
	for host, local := range map[string]bool{"http://127.0.0.1:11434": true, "localhost:1": true, "http://[::1]:1": true, "http://gpu-box:11434": false, "10.0.0.2:11434": false} {
		if localHost(host) != local {
			t.Errorf("localHost(%q) = %v", host, !local)
		}
	}
	if !offline(`pull "spoke-model" from http://127.0.0.1:1: pull model manifest: Get "https://registry.ollama.ai/v2/library/spoke-model/manifests/latest": dial tcp: lookup registry.ollama.ai: no such host`) || offline(`pull model manifest: file does not exist`) {
		t.Error("offline misjudges a pull's error")
	}
}
