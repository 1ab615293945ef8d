package main

// The fault suite: real bulkhead processes (this test binary run as
// bulkhead) against a model server that misbehaves in every way that
// used to grow bulkhead or hang it. Each must end with a clear error
// within its bound, with the process's peak memory under a cap, and the
// next turn in the same data directory must work.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// rssCap is the most memory a bulkhead process may reach in any fault.
const rssCap = 300 << 20

// asBulkhead runs this test binary as bulkhead with args and returns its
// output, exit code, wall time and peak RSS.
func asBulkhead(t *testing.T, env []string, args ...string) (string, string, int, time.Duration, int64) {
	t.Helper()
	stopServingAfter(t, args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{asMainEnv + "=1", "XDG_CONFIG_HOME=" + t.TempDir()}, env...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child's own high-water mark, read while it runs: its rusage
	// cannot tell, since a child started with vfork semantics inherits the
	// test process's peak as its own at exec.
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() {
		var hwm int64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			hwm = max(hwm, vmHWM(cmd.Process.Pid))
			select {
			case <-done:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	_ = cmd.Wait()
	took := time.Since(start)
	close(done)
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode(), took, <-peak
}

// vmHWM is a live process's peak resident set size in bytes (0 once it
// has exited or where /proc cannot say).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kib << 10
		}
	}
	return 0
}

func TestFaults(t *testing.T) {
	t.Parallel()
	manyCalls := make([]api.ToolCall, 500)
	for i := range manyCalls {
		manyCalls[i] = api.ToolCall{Function: api.ToolCallFunction{Name: "now", Arguments: api.NewToolCallFunctionArguments()}}
	}
	big := api.NewToolCallFunctionArguments()
	big.Set("timezone", strings.Repeat("x", 7<<20))
	clockPlan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "clock.now", "query": "time", "depends_on": []string{}}}})
	faults := []struct {
		name, query string
		reply       ollamatest.Reply
		plan        *ollamatest.Reply
		config      string
		want        string // in the error message
		within      time.Duration
	}{
		{name: "endless stream", query: "tell me everything", reply: ollamatest.Reply{Endless: true, Chunks: []string{strings.Repeat("all work and no play ", 50)}},
			want: "limits.answer_bytes", within: 60 * time.Second},
		{name: "stalled stream", query: "tell me slowly", reply: ollamatest.Reply{Chunks: []string{"Once ", "upon "}, Hang: true},
			config: "limits:\n  stall_timeout: 1s\n", want: "sent nothing for 1s", within: 20 * time.Second},
		{name: "headers, then nothing", query: "are you there", reply: ollamatest.Reply{Hang: true},
			config: "limits:\n  stall_timeout: 1s\n", want: "sent nothing for 1s", within: 20 * time.Second},
		{name: "huge tool arguments", query: "what time is it", plan: &clockPlan, reply: ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "now", Arguments: big}}}},
			// 7 MB of arguments take ~7 s alone and ~50 s under -race
			// on a loaded 2-core machine: the bound is for a hang.
			want: "limits.tool_arg_bytes", within: 3 * time.Minute},
		{name: "500 tool calls", query: "what time is it", plan: &clockPlan, reply: ollamatest.Reply{ToolCalls: manyCalls},
			want: "limits.tool_calls_per_answer", within: 30 * time.Second},
		{name: "the disk floor", query: "hello", reply: ollamatest.Text("hi"),
			config: "limits:\n  disk_floor_mb: 1000000000\n", want: "limits.disk_floor_mb", within: 30 * time.Second},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var faulty atomic.Bool // the handler reads it while a serving process may still call
			faulty.Store(true)
			srv := ollamatest.NewScripted(t, func(req *api.ChatRequest) ollamatest.Reply {
				if len(req.Format) > 0 {
					if f.plan != nil && faulty.Load() {
						return *f.plan
					}
					return chatPlan
				}
				if faulty.Load() {
					return f.reply
				}
				return ollamatest.Text("all well")
			}, "m")
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(cfg, []byte("enable: [clock]\npermissions:\n  rules:\n    - {effect: allow, kind: exec, object: clock}\n"+f.config), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"ask", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", filepath.Join(dir, "data")}
			out, errOut, code, took, rss := asBulkhead(t, nil, append(args, f.query)...)
			if code == 0 || !strings.Contains(errOut, f.want) {
				t.Fatalf("exit %d, want a clear error naming %q:\nstdout %q\nstderr %q", code, f.want, clip(out), clip(errOut))
			}
			if took > f.within {
				t.Fatalf("took %s, bound %s", took, f.within)
			}
			if rss > rssCap {
				t.Fatalf("peak RSS %d MB, cap %d MB", rss>>20, rssCap>>20)
			}
			t.Logf("%s: exit %d after %s, peak RSS %d MB: %s", f.name, code, took.Round(10*time.Millisecond), rss>>20, strings.TrimSpace(clip(errOut)))
			// The next turn works: the server behaves, the limits are the
			// defaults again (a 1s stall bound is no bound for a loaded
			// machine's next answer).
			faulty.Store(false)
			if f.config != "" {
				if err := os.WriteFile(cfg, []byte("enable: [clock]\npermissions:\n  rules:\n    - {effect: allow, kind: exec, object: clock}\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, code, _, _ = asBulkhead(t, nil, append(args, "hello again")...)
			if code != 0 || !strings.Contains(out, "all well") {
				t.Fatalf("the next turn must work: exit %d\nstdout %q\nstderr %q", code, clip(out), clip(errOut))
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// A stderr flood: an MCP server that writes to its stderr without pause,
// from its start to its end. Its turn ends in time with the tool's
// answer, bulkhead.log stays small (a burst and a trickle of the lines,
// and the count of those dropped), RSS stays under the cap, and the next
// turn works.
func TestFaultStderrFlood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	server := filepath.Join(t.TempDir(), "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	echoPlan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "test.echo", "query": "echo", "depends_on": []string{}}}})
	srv := ollamatest.NewScripted(t, func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return echoPlan
		}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return ollamatest.Text("all well: " + m.Content)
			}
		}
		if len(req.Tools) > 0 {
			args := api.NewToolCallFunctionArguments()
			args.Set("text", "hi")
			return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "echo", Arguments: args}}}}
		}
		return ollamatest.Text("all well")
	}, "m")
	cfg := filepath.Join(dir, "config.yaml")
	yaml := `enable: [flood]
permissions:
  rules:
    - {effect: allow, kind: exec, object: flood}
mcp:
  flood:
    command: ` + server + `
    args: [-stderr-flood]
    tools: {echo: {functionality: test.echo}}
    catalog:
      - name: test.echo
        description: Echo a text.
        effect: read
        request: {type: object, properties: {text: {type: string}}, required: [text]}
        response: {type: object, properties: {content: {type: string}}, required: [content]}
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	args := []string{"ask", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data}
	const within, logCap = 60 * time.Second, 256 << 10
	for _, q := range []string{"echo hi", "echo hi again"} { // the second turn is the next one
		out, errOut, code, took, rss := asBulkhead(t, nil, append(args, q)...)
		if code != 0 || !strings.Contains(out, "echo: hi") {
			t.Fatalf("%q: exit %d\nstdout %q\nstderr %q", q, code, clip(out), clip(errOut))
		}
		fi, err := os.Stat(filepath.Join(data, "bulkhead.log"))
		if err != nil {
			t.Fatal(err)
		}
		if took > within || rss > rssCap || fi.Size() > logCap {
			t.Fatalf("%q: took %s (bound %s), peak RSS %d MB (cap %d MB), bulkhead.log %d KB (cap %d KB)", q, took, within, rss>>20, rssCap>>20, fi.Size()>>10, logCap>>10)
		}
		// The count is logged by the serving process when the session that
		// started the server leaves it (or a window has passed), which may
		// come a moment after ask exits.
		var b []byte
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			b, _ = os.ReadFile(filepath.Join(data, "bulkhead.log"))
			if strings.Contains(string(b), "lines of stderr dropped") || time.Now().After(deadline) {
				break
			}
		}
		if !strings.Contains(string(b), "lines of stderr dropped") {
			t.Fatalf("%q: the log does not count the dropped lines:\n%s", q, clip(string(b)))
		}
		t.Logf("stderr flood, %q: exit %d after %s, peak RSS %d MB, bulkhead.log %d KB", q, code, took.Round(10*time.Millisecond), rss>>20, fi.Size()>>10)
	}
}
