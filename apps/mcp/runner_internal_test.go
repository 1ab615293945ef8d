package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Every way a server's process is launched — its own program, or
// through each package runner — one line each: what the sandbox lets it
// write is either a folder its config grants (which the sandbox guards:
// sandbox.Protected stays read-only there) or a folder that is this
// app's alone. None of it is a path another principal runs or trusts:
// the user's tool trees (~/.npm, ~/.cache, ~/.local/bin, …), bulkhead's
// data and config, another app's runner cache — even another app
// started the same way, with the same command.
func TestLaunchesWriteNothingAnotherPrincipalRuns(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	bin, ws := t.TempDir(), t.TempDir()
	launches := []struct {
		how     string
		command string
		args    []string
	}{
		{"its own program", "weather-mcp", nil},
		{"npx", "npx", []string{"-y", "@example/server"}},
		{"npm exec", "npm", []string{"exec", "--yes", "@example/server"}},
		{"pnpm dlx", "pnpm", []string{"dlx", "@example/server"}},
		{"pnpx", "pnpx", []string{"@example/server"}},
		{"yarn dlx", "yarn", []string{"dlx", "@example/server"}},
		{"bunx", "bunx", []string{"@example/server"}},
		{"bun x", "bun", []string{"x", "@example/server"}},
		{"uvx", "uvx", []string{"example-server"}},
		{"uv tool run", "uv", []string{"tool", "run", "example-server"}},
		{"pipx run", "pipx", []string{"run", "example-server"}},
	}
	for _, l := range launches {
		if err := os.WriteFile(filepath.Join(bin, l.command), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, conf := filepath.Join(home, ".local", "share", "bulkhead"), filepath.Join(home, ".config", "bulkhead")
	apps := filepath.Join(home, ".cache", "bulkhead", "apps")
	// What other principals run or trust.
	theirs := []string{data, conf}
	for _, tree := range sandbox.HomeTrees {
		theirs = append(theirs, filepath.Join(home, tree))
	}
	overlap := func(a, b string) bool { return within(a, b) || within(b, a) }
	for _, l := range launches {
		cfg := func(app string) Server {
			return Server{Command: l.command, Args: l.args, Env: map[string]string{"PATH": bin}, Folders: []string{ws},
				Private: []string{data, conf}, Own: filepath.Join(apps, app)}
		}
		pa, _, err := policy(cfg("a"))
		if err != nil {
			t.Fatalf("%s: %v", l.how, err)
		}
		pb, _, err := policy(cfg("b"))
		if err != nil {
			t.Fatalf("%s: %v", l.how, err)
		}
		if !slices.Equal(pa.ReadWrite, []string{ws}) {
			t.Errorf("%s: writes %v beside its own folders; only the configured folder (guarded) may be shared", l.how, pa.ReadWrite)
		}
		// Every runner gets a cache of its own; its own program needs none.
		if isRunner := l.how != "its own program"; isRunner != (len(pa.Own) == 1) {
			t.Errorf("%s: a cache of its own %v (a runner: %v)", l.how, pa.Own, isRunner)
		}
		for _, w := range pa.Own {
			if !within(w, filepath.Join(apps, "a")) {
				t.Errorf("%s: its own folder %s is not in the app's", l.how, w)
			}
			for _, o := range pb.Own {
				if overlap(w, o) {
					t.Errorf("%s: app a's %s and app b's %s overlap", l.how, w, o)
				}
			}
		}
		for _, w := range slices.Concat(pa.ReadWrite, pa.Own) {
			for _, o := range theirs {
				if overlap(w, o) && !within(w, filepath.Join(apps, "a")) {
					t.Errorf("%s: writes %s, which %s is", l.how, w, o)
				}
			}
		}
		// The runner's variables point its caches into its own folder.
		for _, e := range pa.Env {
			k, v, _ := strings.Cut(e, "=")
			if k == "PATH" || !filepath.IsAbs(v) {
				continue
			}
			if len(pa.Own) == 0 || !within(v, pa.Own[0]) {
				t.Errorf("%s: %s points outside its own folder", l.how, e)
			}
		}
	}
	// A grant of a tree the user's tools run from is refused.
	for _, tree := range []string{".npm", ".local/bin", ".ssh", ".config/git"} {
		dir := filepath.Join(home, tree)
		if _, _, err := policy(Server{Command: "weather-mcp", Env: map[string]string{"PATH": bin}, Folders: []string{dir}}); err == nil {
			t.Errorf("folders: %s was granted", dir)
		}
	}
	if _, _, err := policy(Server{Command: "weather-mcp", Env: map[string]string{"PATH": bin}, Folders: []string{filepath.Dir(home)}}); err == nil {
		t.Errorf("folders: a folder above the home was granted")
	}
}
