package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// intruderConfig is a config with the MCP test server installed as the
// app "intruder", whose reach tool the planner can route to; net, if
// given, is its mcp.<name>.net.
func intruderConfig(t *testing.T, server, net string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	netLine := ""
	if net != "" {
		netLine = "    net: [" + net + "]\n"
	}
	body := "enable: [builtin, mcp]\nmcp:\n  intruder:\n    command: " + server + "\n" + netLine +
		"    tools:\n      reach: {functionality: intruder.reach}\n" +
		"    catalog:\n      - name: intruder.reach\n        description: Reach things.\n        effect: read\n" +
		`        request: '{"type":"object","properties":{"tcp":{"type":"string"},"unix":{"type":"string"},"find":{"type":"string"},"hello":{"type":"string"}}}'` + "\n" +
		`        response: '{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}'` + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// reachScript plans the intruder's reach, has its spoke call it with
// args, and answers with what the tool said.
func reachScript(args map[string]string) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "intruder.reach", "query": "reach", "depends_on": []string{}}}})
		}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return ollamatest.Text("REACHED " + m.Content)
			}
		}
		a := api.NewToolCallFunctionArguments()
		for k, v := range args {
			a.Set(k, v)
		}
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "reach", Arguments: a}}}}
	}
}

// The bulkhead binary end to end: an MCP server it runs in a real turn
// (in the real serving process, under the whole sandbox) neither sees
// nor reaches bulkhead.sock, the user's other sockets, or the network;
// an endpoint its config names opens only after a network dialog that
// is asked first, and the policy for scripts never allows it.
func TestAnAppReachesNothingOfTheUsers(t *testing.T) {
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	dir := t.TempDir()
	server := filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	data := filepath.Join(dir, "data")
	sock := serve.SocketPath(data)
	agent := filepath.Join(t.TempDir(), "agent.sock")
	al, err := net.Listen("unix", agent)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	var agentHeard atomic.Int32
	go func() {
		for {
			c, err := al.Accept()
			if err != nil {
				return
			}
			agentHeard.Add(1)
			c.Close()
		}
	}()
	tl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "echo: %s", line)
			}()
		}
	}()
	tcp := tl.Addr().String()
	ask := func(cfg, policy string, args map[string]string) string {
		t.Helper()
		srv := ollamatest.NewScripted(t, reachScript(args), "m")
		out, errOut, code := run(t, "ask", "--json", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data, "--on-prompt="+policy, "reach")
		if code != 0 {
			t.Fatalf("ask: exit %d\n%s\n%s", code, out, errOut)
		}
		return out
	}

	out := ask(intruderConfig(t, server, ""), "once", map[string]string{"find": "bulkhead.sock", "hello": sock, "unix": agent, "tcp": tcp})
	for _, want := range []string{"found nothing", "hello: connect failed", "unix failed", "tcp failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the app reached something (no %q):\n%s", want, out)
		}
	}
	if strings.Contains(out, `"kind":"network"`) {
		t.Errorf("an app with no endpoint in its config was asked about the network:\n%s", out)
	}
	if agentHeard.Load() != 0 {
		t.Error("the agent-like socket was reached")
	}

	withNet := intruderConfig(t, server, tcp)
	out = ask(withNet, "expected", map[string]string{"tcp": tcp})
	if !strings.Contains(out, `"kind":"network"`) || !strings.Contains(out, "tcp failed") {
		t.Errorf("--on-prompt=expected must be asked the network and deny it:\n%s", out)
	}
	out = ask(withNet, "once", map[string]string{"tcp": tcp})
	if i, j := strings.Index(out, `"kind":"network"`), strings.Index(out, "tcp ok: echo: hello from the server"); i < 0 || j < 0 || i > j {
		t.Errorf("the granted endpoint: a network dialog first, then the connection:\n%s", out)
	}
}

// An MCP server that cannot start is a configuration to change: exit 2,
// with a message that names it; so is a data directory that others can
// write, which bulkhead refuses before it connects to anything there.
func TestFailuresOfSetUpExitTwo(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("enable: [builtin, mcp]\nmcp:\n  broken:\n    command: /nonexistent/mcp-server\n"), 0o600)
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "m")
	_, errOut, code := run(t, "ask", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", t.TempDir(), "hi")
	if code != 2 || !strings.Contains(errOut, "broken") || !strings.Contains(errOut, "/nonexistent/mcp-server") {
		t.Fatalf("an MCP server that cannot start: exit %d\n%s", code, errOut)
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	_, errOut, code = run(t, "chats", "list", "--ollama-host", srv.Host(), "--data-dir", open)
	t.Cleanup(func() { os.Chmod(open, 0o700) }) // before the test's stop of what serves it
	if code != 2 || !strings.Contains(errOut, open) || !strings.Contains(errOut, "0777") || !strings.Contains(errOut, "written by other users") {
		t.Fatalf("a data directory others can write: exit %d\n%s", code, errOut)
	}
}
