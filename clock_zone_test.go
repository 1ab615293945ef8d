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

// todayScript plans clock.date_add for "today" and answers with what
// the app said.
func todayScript() ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "clock.date_add", "query": "today's date", "depends_on": []string{}}}})
		}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return ollamatest.Text("TODAY " + m.Content)
			}
		}
		a := api.NewToolCallFunctionArguments()
		a.Set("date", "today")
		a.Set("days", 0)
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "date_add", Arguments: a}}}}
	}
}

// A request's "today" is the day of the person who asks it, in their
// zone — not the serving process's, which an earlier client started in
// another zone: two zones 25 hours apart, one serving process.
func TestTodayIsTheAskersDay(t *testing.T) {
	srv := ollamatest.NewScripted(t, todayScript(), "m")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("enable: [clock]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	ask := func(zone string) string {
		t.Helper()
		t.Setenv("TZ", zone)
		out, errOut, code := run(t, "ask", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data, "--on-prompt=once", "what is today's date with clock")
		if code != 0 {
			t.Fatalf("ask in %s: %d %s %s", zone, code, out, errOut)
		}
		return out
	}
	for _, zone := range []string{"Pacific/Pago_Pago", "Pacific/Kiritimati"} { // the first starts the serving process
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Skipf("no zone data here: %v", err)
		}
		want := time.Now().In(loc).Format("2006-01-02")
		if out := ask(zone); !strings.Contains(out, want) {
			t.Errorf("asked in %s, today is %s: %s", zone, want, out)
		}
	}
}
