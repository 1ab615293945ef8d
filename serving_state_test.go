package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// What a command changes reaches the process serving the data directory
// at once: a listing made by doctor or `bulkhead mcp add`, with the
// serving process already running, is what the next session gets from
// it; and a session's Ollama host is its own, never the first session's.

func init() { extraCommands = append(extraCommands, newTestApps) }

// newTestApps prints the MCP apps of a session of the serving process,
// as its apps screen shows them: "app NAME unlisted" or "app NAME
// listed N tools".
func newTestApps(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "test-apps", Hidden: true, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, g, "test", func(_ config.Config, c *serve.Client) error {
				as, err := c.Apps()
				// A server not cached is listed in the background: its
				// state is the one that listing leaves.
				for deadline := time.Now().Add(time.Minute); err == nil && time.Now().Before(deadline) &&
					slices.ContainsFunc(as, func(a serve.AppInfo) bool { return a.Listing }); {
					time.Sleep(20 * time.Millisecond)
					as, err = c.Apps()
				}
				if err != nil {
					return err
				}
				for _, a := range as {
					switch {
					case !a.MCP:
					case a.Unlisted != "":
						fmt.Fprintf(cmd.OutOrStdout(), "app %s unlisted\n", a.Manifest.Name)
					default:
						fmt.Fprintf(cmd.OutOrStdout(), "app %s listed %d tools\n", a.Manifest.Name, len(a.Tools))
					}
				}
				return nil
			})
		},
	}
}

// unlistedServer writes a config that enables the MCP test server as
// tester, whose start fails (and so it is not listed) until its version
// file is written; it returns the config's path, the version file and
// the server.
func unlistedServer(t *testing.T) (cfg, version, server string) {
	t.Helper()
	dir := t.TempDir()
	server = filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	versions := t.TempDir()
	version = filepath.Join(versions, "version")
	cfg = filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf("enable: [clock, tester]\nmcp:\n  tester:\n    command: %s\n    args: [-version-file, %s]\n    read: [%s]\n", server, version, versions)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, version, server
}

// servingPid is the pid of the process serving data.
func servingPid(t *testing.T, data string) int {
	t.Helper()
	st, err := serve.Query(data)
	if err != nil {
		t.Fatal(err)
	}
	return st.Pid
}

// The case: tester is not listed; doctor lists and caches it;
// the next bulkhead on the data directory, served by the same process,
// has it.
func TestDoctorsListingReachesTheServingProcess(t *testing.T) {
	t.Setenv(idleEnv, "5m") // the same serving process throughout
	cfg, version, _ := unlistedServer(t)
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	data := filepath.Join(t.TempDir(), "data")
	common := []string{"--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data}

	out, errOut, code := run(t, append([]string{"test-apps"}, common...)...)
	if code != 0 || !strings.Contains(out, "app tester unlisted") {
		t.Fatalf("before the listing: exit %d\n%s%s", code, out, errOut)
	}
	pid := servingPid(t, data)
	if err := os.WriteFile(version, []byte("1.0.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, append([]string{"doctor"}, common...)...)
	if code != 0 || !strings.Contains(out, "✓ MCP server tester: testserver 1.0.0") || !strings.Contains(out, "installed tester from the tool lists just cached") {
		t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, append([]string{"test-apps"}, common...)...)
	if code != 0 || !strings.Contains(out, "app tester listed") {
		t.Fatalf("after doctor's listing: exit %d\n%s%s", code, out, errOut)
	}
	if now := servingPid(t, data); now != pid {
		t.Fatalf("served by pid %d, then %d: the listing must reach the running process", pid, now)
	}
}

// `bulkhead mcp add` of the server that is not listed — the fix the
// apps screen names — lists it, and the running serving process has it.
func TestMCPAddReachesTheServingProcess(t *testing.T) {
	t.Setenv(idleEnv, "5m")
	cfg, version, server := unlistedServer(t)
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	data := filepath.Join(t.TempDir(), "data")
	common := []string{"--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data}

	out, errOut, code := run(t, append([]string{"test-apps"}, common...)...)
	if code != 0 || !strings.Contains(out, "app tester unlisted") {
		t.Fatalf("before the listing: exit %d\n%s%s", code, out, errOut)
	}
	pid := servingPid(t, data)
	if err := os.WriteFile(version, []byte("1.0.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, append(append([]string{"mcp", "add"}, common...), "--read", filepath.Dir(version), "tester", "--", server, "-version-file", version)...)
	if code != 0 || !strings.Contains(out, "tester lists") || !strings.Contains(out, fmt.Sprintf("(pid %d) runs tester now", pid)) {
		t.Fatalf("mcp add: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, append([]string{"test-apps"}, common...)...)
	if code != 0 || !strings.Contains(out, "app tester listed") {
		t.Fatalf("after mcp add: exit %d\n%s%s", code, out, errOut)
	}
	if now := servingPid(t, data); now != pid {
		t.Fatalf("served by pid %d, then %d: the listing must reach the running process", pid, now)
	}
}

// A serving process started by a session whose Ollama host does not
// answer serves another session's ask and --accessible on a host that
// does; each is told of its own host alone, and doctor names the
// session's host.
func TestAnotherSessionsOllamaHost(t *testing.T) {
	t.Setenv(idleEnv, "5m")
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	data := filepath.Join(t.TempDir(), "data")
	down := "http://127.0.0.1:1"
	// No `ollama serve` can be started for the down host.
	noOllama := []string{"PATH=/nonexistent"}
	ask := func(host, query string) (string, string, int) {
		out, errOut, code, _, _ := asBulkhead(t, noOllama, "ask", "--ollama-host", host, "--model", "m", "--data-dir", data, query)
		return out, errOut, code
	}
	if out, errOut, code := ask(down, "hello"); code == 0 || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Fatalf("ask on a host that does not answer: exit %d\n%s%s", code, out, errOut)
	}
	pid := servingPid(t, data)
	if out, errOut, code := ask(srv.Host(), "hello again"); code != 0 || strings.TrimSpace(out) == "" || strings.Contains(errOut, "127.0.0.1:1") {
		t.Fatalf("ask on a host that answers, served by the process the first started: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := runIn(t, strings.NewReader("hello in line mode\n"), "--accessible", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data)
	if code != 0 || strings.Contains(out, "Ollama cannot be used") || !strings.Contains(out, "request: ") {
		t.Fatalf("--accessible on a host that answers: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = run(t, "doctor", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data)
	if !strings.Contains(out, "✓ ollama "+srv.Host()) || strings.Contains(out, "127.0.0.1:1") {
		t.Fatalf("doctor must name the session's host:\n%s", out)
	}
	// The first host's sessions still get its own error.
	if out, errOut, code := ask(down, "and you?"); code == 0 || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Fatalf("ask on the host that does not answer, after: exit %d\n%s%s", code, out, errOut)
	}
	if now := servingPid(t, data); now != pid {
		t.Fatalf("served by pid %d, then %d: one serving process must serve both hosts", pid, now)
	}
}
