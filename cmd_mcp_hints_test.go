package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/ptytest"
)

// hintRE finds the bulkhead commands a message offers, written in
// backquotes.
var hintRE = regexp.MustCompile("`(bulkhead [^`]+)`")

// hints are the bulkhead commands msg offers, as argument lists (without
// "bulkhead").
func hints(msg string) [][]string {
	var out [][]string
	for _, m := range hintRE.FindAllStringSubmatch(msg, -1) {
		out = append(out, strings.Fields(m[1])[1:])
	}
	return out
}

// unlistedConfig is a config whose enabled server tester cannot be
// listed yet: it waits, at its start, for a file that is not there (gate)
// until the test writes it — so its first listing runs out of time.
func unlistedConfig(t *testing.T) (cfgPath, data, gate string) {
	dir, gdir := t.TempDir(), t.TempDir()
	server := filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	gate = filepath.Join(gdir, "ready")
	cfgPath, data = filepath.Join(dir, "config.yaml"), filepath.Join(dir, "data")
	os.WriteFile(cfgPath, []byte("enable: [builtin, tester]\nmcp:\n  tester:\n    command: "+server+"\n    args: [-wait-file, "+gate+"]\n    read: ["+gdir+"]\n"), 0o600)
	return cfgPath, data, gate
}

// An enabled server bulkhead could not list is shown (the apps screen,
// the serving process) with a fix; every command the fix offers works
// when run as it is written: it lists the server and caches its tools.
func TestTheFixOfAnUnlistedServerWorks(t *testing.T) {
	cfgPath, data, gate := unlistedConfig(t)
	src, err := config.Open(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = data
	_, unlisted, err := engine.InstallAll(cfg, engine.MCPCache(data), nil)
	if err != nil || len(unlisted) != 1 {
		t.Fatalf("unlisted %+v, err %v", unlisted, err)
	}
	fixes := hints(unlisted[0].Fix)
	if !slices.ContainsFunc(fixes, func(f []string) bool { return slices.Equal(f, []string{"mcp", "add", "tester"}) }) {
		t.Fatalf("the fix does not offer `bulkhead mcp add tester`: %s", unlisted[0].Fix)
	}
	t.Logf("the fix: %s", unlisted[0].Fix)
	os.WriteFile(gate, nil, 0o600)
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "m")
	cached := filepath.Join(data, "mcp-cache", "tester.json")
	for _, fix := range fixes {
		os.Remove(cached)
		args := append(fix, "--config", cfgPath, "--data-dir", data)
		if fix[0] == "doctor" {
			args = append(args, "--ollama-host", srv.Host(), "--model", "m")
		}
		out, errOut, code := run(t, args...)
		if _, err := os.Stat(cached); code != 0 || err != nil {
			t.Errorf("the fix `bulkhead %s` (from %q): exit %d, cached %v\n%s%s", strings.Join(fix, " "), unlisted[0].Fix, code, err, out, errOut)
		}
	}
}

// netServer is an MCP server (node) that starts only when it can reach
// addr: as a server started through npx does only when it can reach its
// registry.
const netServer = `const net = require("net");
const readline = require("readline");
const [host, port] = process.argv[2].split(":");
const s = net.connect(Number(port), host);
s.on("error", (e) => { console.error("cannot reach " + process.argv[2] + ": " + e.message); process.exit(1); });
s.on("connect", () => { s.end(); serve(); });
function serve() {
  readline.createInterface({ input: process.stdin }).on("line", (line) => {
    let msg;
    try { msg = JSON.parse(line); } catch { return; }
    if (msg.id === undefined) return;
    let result;
    switch (msg.method) {
      case "initialize":
        result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "netty", version: "1.0.0" } };
        break;
      case "tools/list":
        result = { tools: [{ name: "ping", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } }] };
        break;
      default:
        result = {};
    }
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }) + "\n");
  });
}
`

// netConfig is a config whose enabled server netty needs the endpoint
// of a listener of the test's to start.
func netConfig(t *testing.T) (cfgPath, data string) {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("BULKHEAD_INTEGRATION") == "1" {
			t.Fatalf("node is needed: %v", err)
		}
		t.Skip("no node here")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dir := t.TempDir() // the script's alone: it is granted to read
	script := filepath.Join(dir, "server.js")
	os.WriteFile(script, []byte(netServer), 0o600)
	ep := l.Addr().String()
	home := t.TempDir()
	cfgPath, data = filepath.Join(home, "config.yaml"), filepath.Join(home, "data")
	os.WriteFile(cfgPath, []byte("enable: [builtin, netty]\nmcp:\n  netty:\n    command: node\n    args: ["+script+", "+ep+"]\n    read: ["+dir+"]\n    net: ["+ep+"]\n"), 0o600)
	return cfgPath, data
}

// Off a terminal (CI, a pipe) nothing is asked and the network is not
// allowed: doctor fails such a server with the fix that names
// --allow-net, and that fix works; once bulkhead has the server's tool
// list, the same doctor run is a note, and --json prints a document a
// script reads (the notice about the network goes to standard error).
// mcp add's failure names its flag, and that works too.
func TestOffATerminalTheNetworkFixesWork(t *testing.T) {
	cfgPath, data := netConfig(t)
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "m")
	doctor := func(extra ...string) (string, string, int) {
		t.Helper()
		return runIn(t, strings.NewReader(""), append([]string{"doctor", "--config", cfgPath, "--data-dir", data, "--ollama-host", srv.Host(), "--model", "m"}, extra...)...)
	}
	out, errOut, code := doctor()
	if code != 1 || !strings.Contains(out, "✗ MCP server netty") || !strings.Contains(errOut, "not asked, since standard input is not a terminal") || strings.Contains(out, "[y/N]") {
		t.Fatalf("doctor off a terminal: exit %d\n%s%s", code, out, errOut)
	}
	fix := ""
	if lines := strings.Split(out, "\n"); true {
		for i, l := range lines[:len(lines)-1] {
			if strings.HasPrefix(l, "✗ MCP server netty") {
				fix = lines[i+1]
			}
		}
	}
	fixes := hints(fix)
	if len(fixes) != 1 || strings.Join(fixes[0], " ") != "doctor --allow-net" {
		t.Fatalf("the fix: %q", fix)
	}
	if out, errOut, code := doctor(fixes[0][1:]...); code != 0 || !strings.Contains(out, "✓ MCP server netty: netty 1.0.0, 1 tools") {
		t.Fatalf("the fix `bulkhead doctor --allow-net`: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = doctor("--json")
	var r struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name, Detail, Fix string
			OK, Note          bool
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || !r.OK {
		t.Fatalf("doctor --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	noted := false
	for _, c := range r.Checks {
		noted = noted || c.Name == "MCP server netty" && c.OK && c.Note && strings.Contains(c.Fix, "`bulkhead doctor --allow-net`")
	}
	if !noted {
		t.Errorf("with its tools cached, netty is a note naming the flag:\n%s", out)
	}

	out, errOut, code = runIn(t, strings.NewReader(""), "mcp", "add", "--config", cfgPath, "--data-dir", data, "netty")
	fixes = hints(errOut)
	if code != 1 || len(fixes) == 0 || strings.Join(fixes[0], " ") != "mcp add netty --allow-net" {
		t.Fatalf("mcp add off a terminal: exit %d, fixes %v\n%s%s", code, fixes, out, errOut)
	}
	out, errOut, code = runIn(t, strings.NewReader(""), append(fixes[0], "--config", cfgPath, "--data-dir", data)...)
	if code != 0 || !strings.Contains(out, "netty lists 1 tools") {
		t.Fatalf("the fix `bulkhead mcp add netty --allow-net`: exit %d\n%s%s", code, out, errOut)
	}
}

// On a terminal, `bulkhead mcp add NAME` — the fix the apps screen names
// for a server that needs its network — asks for the endpoint on the
// terminal even when its output goes to a pipe, and a y lists the
// server.
func TestOnATerminalMCPAddAsksAndLists(t *testing.T) {
	cfgPath, data := netConfig(t)
	cmd := exec.Command(os.Args[0], "mcp", "add", "--config", cfgPath, "--data-dir", data, "netty")
	stopServingAfter(t, cmd.Args)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "TERM=xterm-256color")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout // a pipe: the question must not go there
	tm := ptytest.Start(t, cmd, 200, 30)
	tm.WaitFor(t, "Allow it, for this listing? [y/N]", time.Minute)
	tm.Type("y" + ptytest.KeyEnter)
	select {
	case <-tm.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("mcp add did not end; the screen:\n%s", tm.Screen())
	}
	if code := tm.Cmd().ProcessState.ExitCode(); code != 0 || !strings.Contains(stdout.String(), "netty lists 1 tools") || strings.Contains(stdout.String(), "[y/N]") {
		t.Fatalf("exit %d, stdout:\n%s\nscreen:\n%s", code, stdout.String(), tm.Screen())
	}
}
