package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/config"
)

// The README's example works as pasted, in order, into a fresh home: the
// commands it gives before the config example make every folder the
// config's MCP servers are given (folders, read, and the absolute paths
// among their args) — a folder that is not there stops the filesystem
// server at its start.
func TestTheREADMEExampleMakesItsFoldersFirst(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(\\w+)\\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	expand := func(p string) string {
		if strings.HasPrefix(p, "~/") {
			return filepath.Join(home, p[2:])
		}
		return p
	}
	var example string
	for _, bl := range blocks {
		lang, body := bl[1], bl[2]
		if lang == "yaml" && strings.Contains(body, "config.yaml") && strings.Contains(body, "\nmcp:") {
			example = body
			break
		}
		if lang != "sh" {
			continue
		}
		for _, line := range strings.Split(body, "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "mkdir" && f[1] == "-p" {
				for _, d := range f[2:] {
					if err := os.MkdirAll(expand(d), 0o700); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	if example == "" {
		t.Fatal("no config example with mcp: in the README")
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := config.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCP) == 0 {
		t.Fatal("the example configures no MCP server")
	}
	for name, s := range cfg.MCP {
		dirs := append(append([]string{}, s.Folders...), s.Read...)
		for _, a := range s.Args {
			if filepath.IsAbs(a) {
				dirs = append(dirs, a)
			}
		}
		for _, d := range dirs {
			if _, err := os.Stat(d); err != nil {
				t.Errorf("mcp.%s names %s, which the README's commands before the example do not make: %v", name, d, err)
			}
		}
	}
}
