package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/ptytest"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Launch()
	if addr := os.Getenv("SANDBOX_TEST_DIAL"); addr != "" {
		os.Exit(dialHelper(addr))
	}
	if os.Getenv("SANDBOX_TEST_TERMINAL") == "1" {
		os.Exit(terminalHelper())
	}
	testenv.Main(m, false)
}

// dialHelper is this test binary run as a command in the sandbox: it
// connects to addr, says hello and prints what comes back, or why it
// could not.
func dialHelper(addr string) int {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		fmt.Println("dial failed:", err)
		return 0
	}
	defer c.Close()
	fmt.Fprintln(c, "hello from inside")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		fmt.Println("read failed:", err)
		return 0
	}
	fmt.Print("got: ", line)
	return 0
}

// run runs a shell line under p in dir and returns its output and exit code.
func run(t *testing.T, p sandbox.Policy, dir, line string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd, cleanup, err := sandbox.Command(ctx, p, dir, "/bin/sh", "-c", line)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	} else if err != nil {
		t.Fatalf("run %q: %v", line, err)
	}
	return out.String(), code
}

func landlocked(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
}

// A command reads and writes its own folder and nothing of the user's:
// a secret beside it (bulkhead's data directory, say) can neither be read
// nor written, and a file outside cannot be created. Unconfined, the same
// command can do all of it, so the test can fail.
func TestCommandsTouchOnlyTheirFolders(t *testing.T) {
	t.Parallel()
	landlocked(t)
	ws, data := t.TempDir(), t.TempDir()
	key := filepath.Join(data, "grants.key")
	if err := os.WriteFile(key, []byte("SECRET-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := "echo hi > note.txt && cat note.txt; cat " + key + "; echo pwned > " + filepath.Join(data, "planted") + "; echo status $?"
	pol, _ := staged(t, ws)
	out, _ := run(t, pol, ws, line)
	if !strings.Contains(out, "hi") {
		t.Fatalf("the command must work in its own folder: %q", out)
	}
	if strings.Contains(out, "SECRET-KEY") {
		t.Fatalf("the command read the secret: %q", out)
	}
	if _, err := os.Stat(filepath.Join(data, "planted")); err == nil {
		t.Fatal("the command wrote outside its folder")
	}
	out, _ = run(t, sandbox.Policy{Unconfined: true}, ws, line)
	if !strings.Contains(out, "SECRET-KEY") {
		t.Fatalf("unconfined, the same command reads it (or the test proves nothing): %q", out)
	}
	if _, err := os.Stat(filepath.Join(data, "planted")); err != nil {
		t.Fatal("unconfined, the same command writes outside")
	}
}

// A command gets a minimal environment: none of bulkhead's variables.
func TestCommandsGetAMinimalEnvironment(t *testing.T) {
	t.Setenv("BULKHEAD_TEST_SECRET", "s3cr3t")
	ws := t.TempDir()
	out, _ := run(t, sandbox.Policy{ReadWrite: []string{ws}, Env: []string{"PASSED=yes"}}, ws, "env")
	if strings.Contains(out, "s3cr3t") || !strings.Contains(out, "PASSED=yes") || !strings.Contains(out, "PATH=") {
		t.Fatalf("environment:\n%s", out)
	}
}

// What a command starts dies with it, even a process that left its group
// and session (setsid). The process is found by its arguments: in the
// sandbox's pid namespace its pid is not the one outside.
// Both with the namespaces (whose first process ends them all) and
// without (where the launcher, their reaper, does).
func TestProcessesDieWithTheirCommand(t *testing.T) {
	t.Parallel()
	for i, without := range [][]sandbox.Mechanism{nil, {sandbox.Namespaces}} {
		t.Run(fmt.Sprint(without), func(t *testing.T) { dieWithCommand(t, without, 3000+i*1000) })
	}
}

func dieWithCommand(t *testing.T, without []sandbox.Mechanism, base int) {
	ws := t.TempDir()
	secs := strconv.Itoa(base + int(time.Now().UnixNano()%997))
	out, _ := run(t, sandbox.Policy{ReadWrite: []string{ws}, Without: without}, ws, "setsid sleep "+secs+" >/dev/null 2>&1 & sleep 0.3; echo started")
	if !strings.Contains(out, "started") {
		t.Fatalf("the command: %q", out)
	}
	find := func() []int {
		var pids []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); string(b) == "sleep\x00"+secs+"\x00" {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(find()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := find(); len(left) > 0 {
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("the setsid child %v outlived its command", left)
	}
}

// A long-lived process whose binary was removed (built by `go run`, or
// replaced by an upgrade) still starts its commands: this test binary,
// copied, runs a copy of itself that removes its own file and then runs
// a command through the launcher.
func TestLauncherOfARemovedBinary(t *testing.T) {
	if os.Getenv("SANDBOX_TEST_REMOVED") == "1" {
		return // the helper's part is TestRemovedBinaryHelper
	}
	// Not parallel: a binary written while another test forks can be
	// held open for writing by that child until it execs, and running it
	// fails with "text file busy" (golang/go#22315): it is run again then.
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cp := filepath.Join(dir, "copy.test")
	if err := os.WriteFile(cp, b, 0o700); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for try := 0; ; try++ {
		cmd := exec.Command(cp, "-test.run=^TestRemovedBinaryHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "SANDBOX_TEST_REMOVED=1", "SANDBOX_TEST_DIR="+dir)
		if out, err = cmd.CombinedOutput(); !errors.Is(err, syscall.ETXTBSY) || try == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || !strings.Contains(string(out), "LAUNCHED-OK") {
		t.Fatalf("a command of a removed binary: %v\n%s", err, out)
	}
}

func TestRemovedBinaryHelper(t *testing.T) {
	if os.Getenv("SANDBOX_TEST_REMOVED") != "1" {
		t.Skip("run by TestLauncherOfARemovedBinary")
	}
	if err := os.Remove(os.Args[0]); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, sandbox.Policy{ReadWrite: []string{os.Getenv("SANDBOX_TEST_DIR")}}, os.Getenv("SANDBOX_TEST_DIR"), "echo LAUNCHED-OK")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	t.Log(strings.TrimSpace(out))
}

// A symbolic link in the command's folder leads none of its writes
// outside: not to a file there, not to a new file there, not through a
// linked folder (Landlock checks where a path leads, not what it says).
func TestLinksLeadNoWriteOutside(t *testing.T) {
	t.Parallel()
	landlocked(t)
	ws, out := t.TempDir(), t.TempDir()
	secret := filepath.Join(out, "secret")
	if err := os.WriteFile(secret, []byte("orig"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"file": secret, "new": filepath.Join(out, "new"), "dir": out} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	line := "echo pwned > file; echo pwned > new; echo pwned > dir/x; echo pwned >> file; cp /etc/hostname dir/; echo done"
	pol, _ := staged(t, ws)
	for _, p := range []sandbox.Policy{pol, {ReadWrite: []string{ws}, Without: []sandbox.Mechanism{sandbox.Namespaces}}} {
		if o, _ := run(t, p, ws, line); !strings.Contains(o, "done") {
			t.Fatalf("the command: %s", o)
		}
		if b, _ := os.ReadFile(secret); string(b) != "orig" {
			t.Fatalf("a write through a link changed %s: %q", secret, b)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 1 {
			t.Fatalf("a write through a link created files outside: %v", ents)
		}
	}
	if o, _ := run(t, sandbox.Policy{Unconfined: true}, ws, line); !strings.Contains(o, "done") {
		t.Fatal(o)
	}
	if b, _ := os.ReadFile(secret); !strings.Contains(string(b), "pwned") {
		t.Fatal("unconfined, the same command writes through the link (or the test proves nothing)")
	}
}

// A grant that leads into a denied folder (bulkhead's data directory),
// through a link made after bulkhead checked its grants, or that holds
// one, fails the command before it runs: the rules are made on what the
// paths are when the command starts.
func TestGrantsNeverLeadIntoADeniedFolder(t *testing.T) {
	t.Parallel()
	landlocked(t)
	base, data := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "serve.key"), []byte("SECRET-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "ws")
	if err := os.Symlink(data, link); err != nil { // swapped in after the check
		t.Fatal(err)
	}
	for _, grant := range []string{link, filepath.Dir(data)} {
		out, code := run(t, sandbox.Policy{ReadWrite: []string{grant}, Deny: []string{data}}, base, "cat "+filepath.Join(data, "serve.key"))
		if code == 0 || strings.Contains(out, "SECRET-KEY") || !strings.Contains(out, "data directory") {
			t.Fatalf("a grant of %s reaching the denied folder: exit %d %q", grant, code, out)
		}
	}
	if out, code := run(t, sandbox.Policy{ReadWrite: []string{link}}, base, "cat "+filepath.Join(data, "serve.key")); code != 0 || !strings.Contains(out, "SECRET-KEY") {
		t.Fatalf("without the denial, the grant reaches it (or the test proves nothing): %d %q", code, out)
	}
}

// Nothing of the policy reaches the command: no process it can see has
// the policy, the folders it was granted or bulkhead's data directory in
// its arguments, and in bulkhead's data directory not even a name can
// be seen (stat fails, the folder lists empty). Where the namespaces are
// left out, the names show (the test bites); the contents never.
func TestNothingOfThePolicyLeaks(t *testing.T) {
	t.Parallel()
	namespaced(t)
	ws, data := t.TempDir(), t.TempDir()
	key := filepath.Join(data, "serve.key")
	if err := os.WriteFile(key, []byte("SECRET-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done; stat -c 'stat %n' " + key + "; ls -a " + data + "; cat " + key + "; echo end"
	for _, without := range []bool{false, true} {
		pol := sandbox.Policy{ReadWrite: []string{ws}, Deny: []string{data}}
		if without {
			pol.Without = []sandbox.Mechanism{sandbox.Namespaces}
		}
		out, _ := run(t, pol, ws, line)
		if !strings.Contains(out, "end") || strings.Contains(out, "SECRET-KEY") {
			t.Fatalf("without=%v: %q", without, out)
		}
		cmdlines, _, _ := strings.Cut(out, "stat")
		var others []string // the command's own arguments hold the paths it was given
		for _, l := range strings.Split(cmdlines, "\n") {
			if !strings.HasPrefix(l, "/bin/sh -c") && !strings.HasPrefix(l, "tr ") && !strings.HasPrefix(l, "bulkhead sandbox:") {
				others = append(others, l)
			}
		}
		cmdlines = strings.Join(others, "\n")
		for _, secret := range []string{data, ws, "RW", "Deny"} {
			if strings.Contains(cmdlines, secret) {
				t.Errorf("without=%v: a process's arguments show %q:\n%s", without, secret, cmdlines)
			}
		}
		seen := strings.Contains(out, "stat "+key) || strings.Contains(out, "serve.key\n")
		if seen == !without {
			t.Errorf("without=%v: the name serve.key seen: %v, want %v:\n%s", without, seen, without, out)
		}
	}
}

// terminalHelper is this test binary run in a terminal of its own, as
// `bulkhead doctor` runs in the user's: it starts a sandboxed command
// that tries to write to its controlling terminal, and prints what the
// command said.
func terminalHelper() int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd, cleanup, err := sandbox.Command(ctx, sandbox.Policy{}, "/", "/bin/sh", "-c", "if echo ESCAPE > /dev/tty; then echo tty-open; else echo tty-closed; fi")
	if err != nil {
		fmt.Println("helper:", err)
		return 1
	}
	defer cleanup()
	out, _ := cmd.CombinedOutput()
	fmt.Printf("result: %s\n", bytes.TrimSpace(out))
	return 0
}

// A command started from the user's terminal (doctor lists MCP servers
// from it) has no controlling terminal: it cannot write escape
// sequences to /dev/tty, or push input into it. The helper's own shell
// line, run the same way outside the sandbox, can — so the test bites.
func TestCommandsHaveNoTerminal(t *testing.T) {
	t.Parallel()
	landlocked(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_TERMINAL=1")
	term := ptytest.Start(t, cmd, 100, 30)
	screen := term.WaitFor(t, "result:", 30*time.Second)
	if !strings.Contains(screen, "tty-closed") || strings.Contains(screen, "ESCAPE") {
		t.Fatalf("a sandboxed command reached the terminal:\n%s", screen)
	}
	sh := exec.Command("/bin/sh", "-c", "if echo ESCAPE > /dev/tty; then echo tty-open; fi")
	own := ptytest.Start(t, sh, 100, 30)
	if screen := own.WaitFor(t, "tty-open", 30*time.Second); !strings.Contains(screen, "ESCAPE") {
		t.Fatalf("outside the sandbox, the same line reaches the terminal (or the test proves nothing):\n%s", screen)
	}
}
