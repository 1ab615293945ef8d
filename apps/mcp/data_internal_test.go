package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A server's data folder lies beside the data directory, never in it
// (the data directory is empty in every sandbox).
func TestDataRootIsBesideTheDataDirectory(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string]string{
		"/home/ada/.local/share/bulkhead":  "/home/ada/.local/share/bulkhead-apps",
		"/home/ada/.local/share/bulkhead/": "/home/ada/.local/share/bulkhead-apps",
		"/tmp/d":                           "/tmp/d-apps",
	} {
		if got := DataRoot(dir); got != want || within(got, filepath.Clean(dir)) {
			t.Errorf("DataRoot(%q) = %q, want %q", dir, got, want)
		}
	}
	if got := DataFolder("/d/bulkhead", "memory"); got != "/d/bulkhead-apps/memory" {
		t.Errorf("DataFolder: %s", got)
	}
}

// env is the value of key in a policy's environment.
func env(vars []string, key string) (string, bool) {
	for _, e := range vars {
		if v, ok := strings.CutPrefix(e, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// A server gets its data folder as its own — read-write, its
// XDG_DATA_HOME — the same folder whatever version its command pins (the
// runner's cache is another per configuration); server-memory's graph
// file is pointed into it, unless the config's env points it elsewhere;
// and no other app's data folder is in its policy.
func TestAServerOwnsItsDataFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(home, ".local", "share", "bulkhead")
	cache := filepath.Join(home, ".cache", "bulkhead", "apps")
	server := func(app, pkg string, env map[string]string) Server {
		e := map[string]string{"PATH": bin}
		for k, v := range env {
			e[k] = v
		}
		return Server{Command: "npx", Args: []string{"-y", pkg}, Env: e, Own: filepath.Join(cache, app), Data: DataFolder(dataDir, app),
			Private: []string{dataDir}, Reserved: []string{filepath.Dir(cache), DataRoot(dataDir)}}
	}
	var owns [][]string
	for _, pkg := range []string{"@modelcontextprotocol/server-memory", "@modelcontextprotocol/server-memory@2025.4.25"} {
		p, _, err := policy(server("memory", pkg, nil))
		if err != nil {
			t.Fatal(err)
		}
		data := DataFolder(dataDir, "memory")
		if !slices.Contains(p.Own, data) {
			t.Fatalf("%s: its data folder is not its own: %v", pkg, p.Own)
		}
		if v, _ := env(p.Env, "XDG_DATA_HOME"); v != data {
			t.Errorf("%s: XDG_DATA_HOME=%s", pkg, v)
		}
		if v, _ := env(p.Env, "MEMORY_FILE_PATH"); v != filepath.Join(data, "memory.jsonl") {
			t.Errorf("%s: MEMORY_FILE_PATH=%s", pkg, v)
		}
		if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: the folder: %v %v", pkg, fi, err)
		}
		owns = append(owns, p.Own)
	}
	if owns[0][0] == owns[1][0] || owns[0][1] != owns[1][1] {
		t.Errorf("a version pinned is another runner folder and the same data folder: %v, %v", owns[0], owns[1])
	}
	// The config's own choice stands.
	p, _, err := policy(server("memory", "@modelcontextprotocol/server-memory", map[string]string{"MEMORY_FILE_PATH": "/srv/graph.jsonl"}))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := env(p.Env, "MEMORY_FILE_PATH"); v != "/srv/graph.jsonl" {
		t.Errorf("MEMORY_FILE_PATH=%s", v)
	}
	// Another server: its own data folder, no graph variable, nothing of
	// memory's.
	p, _, err = policy(server("fs", "@modelcontextprotocol/server-filesystem", nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, set := env(p.Env, "MEMORY_FILE_PATH"); set {
		t.Error("MEMORY_FILE_PATH set for another server")
	}
	for _, o := range p.Own {
		if within(o, DataFolder(dataDir, "memory")) || within(DataFolder(dataDir, "memory"), o) {
			t.Errorf("fs may write memory's data: %s", o)
		}
	}
	// No grant reaches an app's data folder.
	s := server("fs", "@modelcontextprotocol/server-filesystem", nil)
	s.Read = []string{DataFolder(dataDir, "memory")}
	if _, _, err := policy(s); err == nil {
		t.Error("read: memory's data folder was granted to fs")
	}
}

// The graph server-memory kept beside its code, in an npx install tree
// of the app's (before it had a data folder), is copied into the data
// folder once: the newest, and never through a link the server planted.
func TestAdoptTakesTheOldGraphOnce(t *testing.T) {
	t.Parallel()
	own, data := t.TempDir(), t.TempDir()
	d := dataVars[0]
	dist := func(runner, npx string) string {
		dir := filepath.Join(own, runner, "npm", "_npx", npx, "node_modules", d.Pkg, "dist")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	old := filepath.Join(dist("runner-1", "aa"), "memory.json")
	newer := filepath.Join(dist("runner-2", "bb"), "memory.jsonl")
	os.WriteFile(old, []byte(`{"type":"entity","name":"old"}`), 0o600)
	os.WriteFile(newer, []byte(`{"type":"entity","name":"newer"}`), 0o600)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	to := filepath.Join(data, d.File)
	adopt(own, d, to)
	if b, _ := os.ReadFile(to); string(b) != `{"type":"entity","name":"newer"}` {
		t.Fatalf("adopted %q", b)
	}
	// Once there, it is the server's: never written over.
	os.WriteFile(to, []byte("mine now"), 0o600)
	adopt(own, d, to)
	if b, _ := os.ReadFile(to); string(b) != "mine now" {
		t.Fatalf("written over: %q", b)
	}

	// A link the server planted in its install tree leads nowhere.
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("SECRET"), 0o600)
	own2, to2 := t.TempDir(), filepath.Join(t.TempDir(), d.File)
	dir := filepath.Join(own2, "runner-1", "npm", "_npx", "cc", "node_modules", d.Pkg)
	os.MkdirAll(dir, 0o700)
	os.Symlink(filepath.Dir(secret), filepath.Join(dir, "dist"))
	os.Rename(secret, filepath.Join(filepath.Dir(secret), "memory.jsonl"))
	os.Symlink(filepath.Join(filepath.Dir(secret), "memory.jsonl"), filepath.Join(dist2(t, own2, d), "memory.json"))
	adopt(own2, d, to2)
	if _, err := os.Stat(to2); err == nil {
		b, _ := os.ReadFile(to2)
		t.Fatalf("adopted through a link: %q", b)
	}
}

// dist2 is a second install tree's dist folder under own.
func dist2(t *testing.T, own string, d dataVar) string {
	dir := filepath.Join(own, "runner-2", "npm", "_npx", "dd", "node_modules", d.Pkg, "dist")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
