package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// The sandbox of a stdio server (package sandbox): a minimal environment
// (sandbox.Environ) plus Server.Env, and on Linux a Landlock ruleset that
// lets it read the system's folders and
//
//   - read its own installation: the folder of its executable (as named
//     and with links resolved); for a program installed by npm (a path
//     through node_modules) the folder that holds node_modules (the npm
//     prefix); and the same for the interpreter a script names on its #!
//     line (node, python) where PATH finds it;
//   - started through a package runner (npx, pnpm dlx, uvx, …:
//     runner.go), read and write a cache and install tree of its own
//     (Server.Own), never the user's (~/.npm) nor another app's;
//   - read and write its own data folder (Server.Data: data.go), kept
//     across its versions, and no other app's;
//   - read Server.Read and read and write Server.Folders (config
//     mcp.<name>.read and mcp.<name>.folders), and nothing else: not its
//     working folder (Dir) nor the workspace unless they are listed there.
//
// No grant reaches into a Server.Private folder (bulkhead's data
// directory and config folder, which are empty in its sandbox), into
// Server.Own, or into a Server.Reserved folder (bulkhead's cache folder,
// which holds the package caches of every app), or holds one; a folder
// granted to write is never in one of the user's sandbox.HomeTrees
// (~/.npm, ~/.local/bin, ~/.ssh, …), nor holds the home folder: a configured grant that would is refused (the
// server does not start); an automatic one is narrowed to the executable
// file itself, or dropped. An automatic grant is never the root, the home
// folder or a folder above it.

// policy is the sandbox policy of a stdio server and the executable to
// run (the command found on PATH).
func policy(cfg Server) (sandbox.Policy, string, error) {
	env := make([]string, 0, len(cfg.Env))
	for k, v := range cfg.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	pathEnv, ok := cfg.Env["PATH"]
	if !ok {
		pathEnv = os.Getenv("PATH")
	}
	exe, err := lookPath(cfg.Command, pathEnv, cfg.Dir)
	if err != nil {
		return sandbox.Policy{}, "", err
	}
	if cfg.Unconfined {
		return sandbox.Policy{Unconfined: true, Env: env}, exe, nil
	}
	private := make([]string, 0, len(cfg.Private))
	for _, p := range cfg.Private {
		if p != "" {
			private = append(private, realPath(p))
		}
	}
	reserved := slices.Clone(private)
	for _, r := range append([]string{cfg.Own}, cfg.Reserved...) {
		if r != "" {
			reserved = append(reserved, realPath(r))
		}
	}
	overlaps := func(d string) string {
		for _, p := range reserved {
			if within(d, p) || within(p, d) {
				return p
			}
		}
		return ""
	}
	var p sandbox.Policy
	p.Env, p.Without, p.Deny = env, cfg.Without, private
	realHome := ""
	if h, err := os.UserHomeDir(); err == nil {
		realHome = realPath(h)
	}
	for _, g := range []struct {
		key  string
		dirs []string
		to   *[]string
	}{{"folders", cfg.Folders, &p.ReadWrite}, {"read", cfg.Read, &p.ReadOnly}} {
		for _, d := range g.dirs {
			if !filepath.IsAbs(d) {
				return p, "", fmt.Errorf("%s: %q is not an absolute path", g.key, d)
			}
			if o := overlaps(realPath(d)); o != "" {
				return p, "", fmt.Errorf("%s: %s would reach %s, which is bulkhead's (its data directory, its config folder, or its cache folder, where the apps' package caches lie); grant a folder that neither holds it nor lies in it", g.key, d, o)
			}
			if g.key == "folders" {
				if tree := sandbox.InHomeTree(realPath(d), realHome); tree != "" {
					return p, "", fmt.Errorf("folders: %s lies in %s, from which your own tools run code (or which they trust): an app may not write there; grant it under read, or another folder", d, tree)
				}
				if realHome != "" && within(realHome, realPath(d)) {
					return p, "", fmt.Errorf("folders: %s holds your home folder; grant the folder the app needs, not one above your home", d)
				}
			}
			*g.to = append(*g.to, d)
		}
	}
	home, _ := os.UserHomeDir()
	safe := func(d string) bool {
		d = realPath(d)
		return d != "/" && (home == "" || !within(realPath(home), d)) && overlaps(d) == ""
	}
	// grant grants a folder of the installation read-only, or the file
	// alone where the folder is too wide.
	grant := func(dir, file string) {
		switch {
		case safe(dir):
			p.ReadOnly = append(p.ReadOnly, dir)
		case file != "" && overlaps(realPath(file)) == "":
			p.ReadOnly = append(p.ReadOnly, file)
		}
	}
	install := func(exe string) {
		grant(filepath.Dir(exe), exe)
		real, err := filepath.EvalSymlinks(exe)
		if err != nil {
			return
		}
		grant(filepath.Dir(real), real)
		if i := strings.Index(real, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
			grant(real[:i], "")
		}
	}
	install(exe)
	if interp := interpreter(exe, pathEnv); interp != "" {
		install(interp)
	}
	if r, ok := runnerOf(exe); ok && cfg.Own != "" {
		own := ownDir(cfg.Own, cfg)
		if err := os.MkdirAll(own, 0o700); err != nil {
			return p, "", fmt.Errorf("the folder of its package runner (%s): %w", r.Name, err)
		}
		p.Own = append(p.Own, own)
		p.Env = setEnv(p.Env, runnerEnv(r, own))
		if _, set := cfg.Env["npm_config_registry"]; !set && usesNPMRegistry(r) {
			if reg, err := NPMRegistry(); err == nil && reg != "" {
				p.Env = setEnv(p.Env, []string{"npm_config_registry=" + reg})
			}
		}
	}
	if err := dataPolicy(&p, cfg); err != nil {
		return p, "", err
	}
	p.ReadOnly = slices.Compact(p.ReadOnly)
	return p, exe, nil
}

// lookPath finds a command as exec.LookPath does, on the PATH the server
// gets; a relative path with a slash is taken from dir.
func lookPath(name, pathEnv, dir string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", err
		}
		if err := executable(abs); err != nil {
			return "", &exec.Error{Name: name, Err: err}
		}
		return abs, nil
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue // never the current folder
		}
		if p := filepath.Join(d, name); executable(p) == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}

// interpreter is the program a script's #! line names ("env node": node
// on PATH), or "".
func interpreter(exe, pathEnv string) string {
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	line, ok := bytes.CutPrefix(head[:n], []byte("#!"))
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	prog := fields[0]
	if filepath.Base(prog) == "env" {
		prog = ""
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
				prog = f
				break
			}
		}
	}
	if prog == "" {
		return ""
	}
	p, err := lookPath(prog, pathEnv, "/")
	if err != nil {
		return ""
	}
	return p
}

// realPath is an absolute, cleaned path with its links resolved as far
// as they exist.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	} else if !errors.Is(err, fs.ErrNotExist) {
		return p
	}
	// resolve the part that exists
	dir, rest := filepath.Dir(p), filepath.Base(p)
	if dir == p {
		return p
	}
	return filepath.Join(realPath(dir), rest)
}

// within reports whether p is dir or lies in it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}
