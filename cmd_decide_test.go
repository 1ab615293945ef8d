package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// Plain text comes before the plan's end: a planner whose first tokens
// say plain chat and then write nothing more (it hangs) still lets
// `ask --stream` print the answer and exit 0, drafted or not.
func TestPlainTextComesBeforeThePlansEnd(t *testing.T) {
	const answer = "The sea keeps the light."
	srv := ollamatest.NewScripted(t, func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.Reply{Chunks: []string{`{"kind": "chat", "steps": [`}, Hang: true}
		}
		return ollamatest.Text(answer)
	}, "m")
	for _, draft := range []string{"true", "false"} {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte("hub:\n  draft: "+draft+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		var out, errOut string
		var code int
		go func() {
			defer close(done)
			out, errOut, code = run(t, "ask", "--stream", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", t.TempDir(), "--config", cfg, "say something nice")
		}()
		select {
		case <-done:
		case <-time.After(time.Minute): // only a failure waits this long
			t.Fatalf("hub.draft=%s: the answer waited for the plan's end, which never comes", draft)
		}
		if code != 0 || strings.TrimSpace(out) != answer {
			t.Fatalf("hub.draft=%s: exit %d\nstdout %q\nstderr %q", draft, code, out, errOut)
		}
	}
}
