package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
)

// A server started through a package runner (npx, pnpm dlx, uvx, …)
// runs code the runner installed into its cache: npx runs whatever sits
// in <cache>/_npx/<hash>/node_modules again, unchecked. A cache shared
// with the user, or with another app, would let one app rewrite the code
// that the user's own npx — or another app, with its grants — runs next
// (invariant 10). So each app started through a runner gets a cache and
// install tree of its own, under bulkhead's control: Server.Own, one
// folder per configuration of the app (ownDir), which no other principal
// runs anything from. The runner's variables point every cache and
// install tree it keeps there; whatever else it writes under HOME lands
// in the app's temporary HOME, removed when the process ends. What the
// server keeps as its own data goes to its data folder (data.go), which
// outlives the configuration: its XDG_DATA_HOME is that folder, not the
// runner's.

// runner is a package runner and where it keeps what it installs.
type runner struct {
	// Name is how docs/sandbox.md names it.
	Name string
	// Exes are the executables' base names that are it.
	Exes []string
	// Env points its caches and install trees into own.
	Env func(own string) []string
}

// runners are the package runners a server command commonly uses.
// Adding one is a line here (and its row in docs/sandbox.md); the
// launch table test (runner_test.go) checks it.
var runners = []runner{
	{"npx, npm exec", []string{"npx", "npm"}, func(own string) []string {
		return []string{"npm_config_cache=" + filepath.Join(own, "npm")}
	}},
	{"pnpm dlx, pnpx", []string{"pnpm", "pnpx"}, func(own string) []string {
		return []string{"npm_config_store_dir=" + filepath.Join(own, "pnpm", "store"), "npm_config_cache_dir=" + filepath.Join(own, "pnpm", "cache"),
			"PNPM_HOME=" + filepath.Join(own, "pnpm", "home")}
	}},
	{"yarn dlx", []string{"yarn"}, func(own string) []string {
		return []string{"YARN_CACHE_FOLDER=" + filepath.Join(own, "yarn", "cache"), "YARN_GLOBAL_FOLDER=" + filepath.Join(own, "yarn", "global")}
	}},
	{"bunx, bun x", []string{"bunx", "bun"}, func(own string) []string {
		return []string{"BUN_INSTALL_CACHE_DIR=" + filepath.Join(own, "bun", "cache"), "BUN_INSTALL=" + filepath.Join(own, "bun")}
	}},
	{"uvx, uv tool run", []string{"uvx", "uv"}, func(own string) []string {
		return []string{"UV_CACHE_DIR=" + filepath.Join(own, "uv", "cache"), "UV_TOOL_DIR=" + filepath.Join(own, "uv", "tools"),
			"UV_TOOL_BIN_DIR=" + filepath.Join(own, "uv", "bin"), "UV_PYTHON_INSTALL_DIR=" + filepath.Join(own, "uv", "python")}
	}},
	{"pipx run", []string{"pipx"}, func(own string) []string {
		return []string{"PIPX_HOME=" + filepath.Join(own, "pipx"), "PIPX_BIN_DIR=" + filepath.Join(own, "pipx", "bin"),
			"PIPX_MAN_DIR=" + filepath.Join(own, "pipx", "man"), "PIP_CACHE_DIR=" + filepath.Join(own, "pip")}
	}},
}

// runnerOf is the runner exe is, if any.
func runnerOf(exe string) (runner, bool) {
	base := filepath.Base(exe)
	for _, r := range runners {
		if slices.Contains(r.Exes, base) {
			return r, true
		}
	}
	return runner{}, false
}

// NPMRunner names the package runner a server's command starts it
// through when that runner downloads the server from the npm registry
// (npx, pnpm dlx, yarn dlx, bunx: its first start needs the registry as
// a network endpoint, NPMRegistry); ok is false for any other command.
func NPMRunner(command string) (name string, ok bool) {
	r, ok := runnerOf(command)
	if !ok || !usesNPMRegistry(r) {
		return "", false
	}
	return filepath.Base(command), true
}

// runnerEnv is a runner's variables under own, with the XDG folders a
// runner's helpers fall back on: the runner's own, never the user's
// (an app with a data folder has its XDG_DATA_HOME there: dataPolicy).
func runnerEnv(r runner, own string) []string {
	return append(r.Env(own),
		"XDG_CACHE_HOME="+filepath.Join(own, "xdg", "cache"), "XDG_DATA_HOME="+filepath.Join(own, "xdg", "data"),
		"XDG_STATE_HOME="+filepath.Join(own, "xdg", "state"))
}

// ownDir is the folder of base that is this configuration of the app's
// alone: a changed command, arguments or working folder is another
// principal, which starts with an empty cache (the old configuration's
// code could have planted what the new one's runner would run).
func ownDir(base string, cfg Server) string {
	h := sha256.New()
	for _, s := range append([]string{cfg.Command, cfg.Dir}, cfg.Args...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return filepath.Join(base, "runner-"+hex.EncodeToString(h.Sum(nil))[:16])
}

// setEnv replaces or adds the variables of vars in env.
func setEnv(env, vars []string) []string {
	for _, v := range vars {
		k, _, _ := strings.Cut(v, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		env = append(env, v)
	}
	return env
}
