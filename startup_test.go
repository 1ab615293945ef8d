package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// BenchmarkAskStart times whole `bulkhead ask --private` processes, start
// to exit, against a scripted Ollama, in three setups run in turn within
// each iteration (so that load on the machine hits them alike): no MCP
// server configured ("none"), and 20 enabled copies of the test server of
// apps/mcp whose tool lists are cached ("warm") or not ("cold": the cache
// is removed before the run). The request is a chat: no turn routes to an
// MCP app. It reports each setup's median milliseconds, the median ratios
// to "none" of runs made side by side, and the same of CPU time (user +
// system of the bulkhead process and the servers it waited for). The
// binary is built from this tree, or named by $BULKHEAD_BENCH_BIN (to
// measure another build):
//
//	go test -run XXX -bench AskStart -benchtime 10x -count 6 . | benchstat -
func BenchmarkAskStart(b *testing.B) {
	dir := b.TempDir()
	bin := os.Getenv("BULKHEAD_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "bulkhead")
		goBuild(b, bin, ".")
	}
	server := filepath.Join(dir, "testserver")
	goBuild(b, server, "./apps/mcp/internal/testserver")
	srv := ollamatest.NewScripted(b, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Text("hello there")
	}), "m")
	type setup struct {
		name      string
		data, cfg string
		cold      bool
		wall, cpu []time.Duration // one per iteration
	}
	setups := []*setup{{name: "none"}, {name: "warm"}, {name: "cold", cold: true}}
	for _, s := range setups {
		s.data = b.TempDir()
		s.cfg = filepath.Join(b.TempDir(), "config.yaml")
		n := 20
		if s.name == "none" {
			n = 0
		}
		if err := os.WriteFile(s.cfg, []byte(mcpConfig(server, n)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	ask := func(s *setup) {
		if s.cold {
			if err := os.RemoveAll(filepath.Join(s.data, "mcp-cache")); err != nil {
				b.Fatal(err)
			}
		}
		cmd := exec.Command(bin, "ask", "--private", "--config", s.cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", s.data, "hello")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		s.wall = append(s.wall, time.Since(start))
		if err != nil || !strings.Contains(string(out), "hello there") {
			b.Fatalf("ask (%s): %v\n%s", s.name, err, out)
		}
		s.cpu = append(s.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	for _, s := range setups {
		ask(s) // the store exists, the cache is filled
		s.wall, s.cpu = nil, nil
	}
	b.ResetTimer()
	for i := range b.N {
		for k := range setups {
			ask(setups[(i+k)%len(setups)])
		}
	}
	none, warm, cold := setups[0], setups[1], setups[2]
	for _, s := range setups {
		b.ReportMetric(median(s.wall, nil), "ms-"+s.name)
	}
	b.ReportMetric(median(warm.wall, none.wall), "warm/none")
	b.ReportMetric(median(cold.wall, none.wall), "cold/none")
	b.ReportMetric(median(warm.cpu, none.cpu), "cpu-warm/none")
	b.ReportMetric(0, "ns/op")
}

// median is the median of xs in milliseconds, or with ys the median of
// the ratios xs[i]/ys[i] (runs made side by side): robust to the odd run
// that another process on the machine slowed down.
func median(xs, ys []time.Duration) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		if ys == nil {
			v[i] = float64(x.Microseconds()) / 1000
		} else {
			v[i] = float64(x) / float64(ys[i])
		}
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// mcpConfig is a config file with n copies of the test server, enabled.
func mcpConfig(server string, n int) string {
	if n == 0 {
		return "enable: [builtin]\n"
	}
	var sb strings.Builder
	sb.WriteString("enable: [builtin, mcp]\nmcp:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  s%02d: {command: %q}\n", i, server)
	}
	return sb.String()
}

func goBuild(b testing.TB, out, pkg string) {
	b.Helper()
	if msg, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
}

// BenchmarkVersion times `bulkhead version` against `ollama --version`,
// run in turn within each iteration: the median wall time of each, and
// the median ratios of wall time and of CPU time (user + system) of the
// runs made side by side. The Ollama binary is $BULKHEAD_OLLAMA_BIN or the
// one scripts/ollama-build.sh caches; bulkhead is built from this tree or
// named by $BULKHEAD_BENCH_BIN:
//
//	go test -run XXX -bench Version -benchtime 100x -count 6 . | benchstat -
func BenchmarkVersion(b *testing.B) {
	ollama := os.Getenv("BULKHEAD_OLLAMA_BIN")
	if ollama == "" {
		home, _ := os.UserHomeDir()
		found, _ := filepath.Glob(filepath.Join(home, ".cache", "bulkhead", "ollama-v*", "bin", "ollama"))
		if len(found) == 0 {
			b.Skip("no Ollama binary: set BULKHEAD_OLLAMA_BIN")
		}
		ollama = found[len(found)-1]
	}
	bin := os.Getenv("BULKHEAD_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "bulkhead")
		goBuild(b, bin, ".")
	}
	cmds := [][]string{{bin, "version"}, {ollama, "--version"}}
	var wall, cpu [2][]time.Duration
	run := func(i int) {
		cmd := exec.Command(cmds[i][0], cmds[i][1:]...)
		cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:1") // nothing listens: ollama does not wait for a server
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v", cmds[i], err)
		}
		wall[i] = append(wall[i], time.Since(start))
		cpu[i] = append(cpu[i], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	run(0)
	run(1)
	wall, cpu = [2][]time.Duration{}, [2][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		run(i % 2)
		run(1 - i%2)
	}
	b.ReportMetric(median(wall[0], nil), "ms-bulkhead")
	b.ReportMetric(median(wall[1], nil), "ms-ollama")
	b.ReportMetric(median(wall[0], wall[1]), "wall-ratio")
	b.ReportMetric(median(cpu[0], cpu[1]), "cpu-ratio")
	b.ReportMetric(0, "ns/op")
}
