package mcp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ExitError is the error of a stdio server that exited as it started:
// before it answered the MCP handshake, or before it listed its tools.
// It says what a person needs to fix it: the exit status, the server's
// own last lines of stderr, and the likeliest cause in words — which
// bulkhead works out from the config (a folder it names that does not
// exist) and from those lines; the lines are the server's, shown as
// quoted data.
type ExitError struct {
	App string
	// Status is the exit status as the OS gives it ("exit status 1",
	// "signal: killed"); Code the exit code (-1: killed by a signal).
	Status string
	Code   int
	// Stderr are its last lines of stderr (at most 8, each cut to 300
	// bytes, control characters removed); none when it wrote none or
	// ran for a private turn.
	Stderr []string
	// Cause is the likeliest cause, and Fix what to do, in bulkhead's
	// words.
	Cause, Fix string
	// Logged says where its stderr went (bulkhead.log, or why not).
	Logged string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the MCP server exited as it started (%s)", e.Status)
	if e.Cause != "" {
		b.WriteString(": " + e.Cause)
	}
	if len(e.Stderr) > 0 {
		b.WriteString("; its last lines of stderr:")
		for _, l := range e.Stderr {
			b.WriteString(" " + strconv.Quote(l))
		}
	}
	if e.Fix != "" {
		b.WriteString("; " + e.Fix)
	}
	if e.Logged != "" {
		b.WriteString("; " + e.Logged)
	}
	return b.String()
}

// FolderError is the error of a server that was not started because a
// folder its config gives it to write (folders) does not exist: its
// sandbox has nothing to give it there.
type FolderError struct {
	App     string
	Folders []string
}

func (e *FolderError) Error() string {
	return fmt.Sprintf("the folder %s that its config gives it (mcp.%s.folders) does not exist; %s", strings.Join(e.Folders, ", "), e.App, e.Fix())
}

// Fix is what makes it start.
func (e *FolderError) Fix() string {
	return fmt.Sprintf("create it (mkdir -p %s) and list the server again", strings.Join(e.Folders, " "))
}

// exitError is the ExitError of a process that has exited.
func (c *conn) exitError() *ExitError {
	e := &ExitError{App: c.app, Status: "exit status 0"}
	if c.exitErr != nil {
		e.Status = c.exitErr.Error()
	}
	var ee *exec.ExitError
	signaled := false
	if errors.As(c.exitErr, &ee) {
		e.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			signaled = true
		}
	}
	if c.stderr != nil {
		e.Stderr = c.stderr.last()
		e.Logged = c.stderr.words()
	}
	e.Cause, e.Fix = causeOf(c.app, c.cfg, e, signaled)
	return e
}

// The words of stderr that point at a cause (lower case).
var (
	missingWords = []string{"enoent", "no such file or directory", "not accessible", "does not exist", "cannot access", "not found: /", "no such directory"}
	deniedWords  = []string{"eacces", "eperm", "permission denied", "operation not permitted", "read-only file system", "erofs"}
	netWords     = []string{"enotfound", "eai_again", "getaddrinfo", "econnrefused", "econnreset", "etimedout", "enetunreach", "network", "fetch failed", "socket hang up",
		"could not resolve", "temporary failure in name resolution", "connection refused"}
	commandWords = []string{"command not found", "executable file not found", "no such file or directory: '", "exec format error"}
	packageWords = []string{"e404", "404 not found", "is not in this registry", "no matching version"}
)

func mentions(lines []string, words []string) bool {
	for _, l := range lines {
		l = strings.ToLower(l)
		for _, w := range words {
			if strings.Contains(l, w) {
				return true
			}
		}
	}
	return false
}

// causeOf is the likeliest cause of a start that ended in e, and what to
// do. A folder the config names (folders, read, an absolute path among
// the args, dir) that does not exist comes first: a server given a
// folder commonly exits at once when it is missing, whatever it writes.
func causeOf(app string, cfg Server, e *ExitError, signaled bool) (cause, fix string) {
	key := "mcp." + app
	if missing := missingFolders(cfg); len(missing) > 0 {
		return fmt.Sprintf("the folder %s that its config names does not exist", strings.Join(missing, ", ")),
			fmt.Sprintf("create it (mkdir -p %s) and list the server again", strings.Join(missing, " "))
	}
	lines := e.Stderr
	switch {
	case signaled:
		return "it was killed by a signal", "run its command by hand to see why"
	case e.Code == 127 || mentions(lines, commandWords):
		return "its command, or one it runs, was not found in its sandbox", fmt.Sprintf("check %s.command and args; a command it runs must be installed in a system folder or its own", key)
	case mentions(lines, packageWords):
		return "the package runner found no such package or version", fmt.Sprintf("check the package name in %s.args", key)
	case mentions(lines, deniedWords):
		return "it was refused a file or folder it needs (its sandbox reads only the folders its config grants)",
			fmt.Sprintf("grant the folder it names in %s.folders (read and write) or %s.read (read only)", key, key)
	case mentions(lines, missingWords):
		return "a file or folder it needs does not exist, or its sandbox hides it",
			fmt.Sprintf("create the file or folder its stderr names, and grant its folder in %s.folders or %s.read", key, key)
	case mentions(lines, netWords) && len(cfg.Net) == 0:
		return "it could not reach the network, and its config names none",
			fmt.Sprintf("name the endpoints it needs in %s.net (registry.npmjs.org:443 for npx), and allow them when asked", key)
	case mentions(lines, netWords):
		return "it could not reach the network",
			fmt.Sprintf("allow its endpoints (%s) when asked: `bulkhead mcp add %s` or `bulkhead doctor` on a terminal ask for them", endpoints(cfg), app)
	case len(lines) == 0:
		return "it wrote nothing on stderr", "run its command by hand to see why"
	}
	return "it stopped with an error of its own (its stderr says which)", fmt.Sprintf("fix what its stderr names, in %s or around it", key)
}

func endpoints(cfg Server) string {
	var out []string
	for _, e := range cfg.Net {
		out = append(out, e.String())
	}
	return strings.Join(out, ", ")
}

// missingFolders are the folders cfg names that do not exist: Folders,
// Read, Dir, and the args that are absolute paths (one with an
// extension names a file, and is not counted).
func missingFolders(cfg Server) []string {
	var out []string
	seen := map[string]bool{}
	check := func(p string, arg bool) {
		if p == "" || !filepath.IsAbs(p) || seen[p] || arg && filepath.Ext(p) != "" {
			return // an argument with an extension names a file, which it may make
		}
		seen[p] = true
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			out = append(out, p)
		}
	}
	for _, f := range cfg.Folders {
		check(f, false)
	}
	for _, f := range cfg.Read {
		check(f, false)
	}
	check(cfg.Dir, false)
	for _, a := range cfg.Args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		check(a, true)
	}
	return out
}
