package mcp

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/datadir"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// A server's own data — a knowledge graph, an index, its settings —
// outlives its process and its version: it lives in a folder of the
// app's (Server.Data, DataFolder), not in its temporary HOME (removed
// when the process ends) and not in its package runner's install tree
// (runner.go), which a changed command — a version pinned, an argument
// added — replaces with an empty one. The folder is the app's alone:
// read-write to it (sandbox.Policy.Own) and to no other app (the
// engine reserves DataRoot, so no folders: or read: grant reaches it);
// its XDG_DATA_HOME points there (unless its config's env sets one). A
// server that keeps its data beside its own code unless a variable says
// otherwise (dataVars: server-memory's graph) has that variable pointed
// into the folder too, and data it kept in a runner's install tree
// before is copied there once (adopt).
//
// The folder is kept across the app's configurations: a new version of
// the server reads what the old one wrote, as a program reads its
// ~/.local/share after an upgrade. No package runner keeps code there —
// each runner's own variables point its caches and install trees into
// the runner folder of that configuration (ownDir). `bulkhead mcp list`
// names the folder and `bulkhead mcp rm` offers to remove it.

// DataRoot holds the apps' own data folders for the data directory
// dataDir: beside it (its name with "-apps"), never in it — the data
// directory is an empty folder in every app's sandbox, and no grant may
// reach into it.
func DataRoot(dataDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(dataDir)), filepath.Base(filepath.Clean(dataDir))+"-apps")
}

// DataFolder is app's own data folder for the data directory dataDir.
func DataFolder(dataDir, app string) string { return filepath.Join(DataRoot(dataDir), app) }

// dataVar is a server that keeps its data beside its own code unless
// Env says otherwise: started with Pkg (as an argument, any version),
// its Env is pointed at File in its data folder. Old are the names of
// that data beside its code (in its package's dist/), newest format
// first.
type dataVar struct {
	Pkg, Env, File string
	Old            []string
}

// dataVars are the servers that keep their data beside their code.
// Adding one is a line here (and its row in docs/sandbox.md).
var dataVars = []dataVar{
	{"@modelcontextprotocol/server-memory", "MEMORY_FILE_PATH", "memory.jsonl", []string{"memory.jsonl", "memory.json"}},
}

// maxAdopt bounds the data adopt copies.
const maxAdopt = 64 << 20

// dataPolicy gives a stdio server its data folder (cfg.Data; none when
// ""): made (the user's alone, like the data directory), granted
// read-write as the app's own, and named by its XDG_DATA_HOME and the
// variables of dataVars — a variable its config's env sets is left as
// it is.
func dataPolicy(p *sandbox.Policy, cfg Server) error {
	if cfg.Data == "" {
		return nil
	}
	root, err := datadir.Create(filepath.Dir(cfg.Data))
	if err != nil {
		return fmt.Errorf("the apps' data folder: %w", err)
	}
	root.Close()
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return fmt.Errorf("its data folder: %w", err)
	}
	p.Own = append(p.Own, cfg.Data)
	var vars []string
	if _, set := cfg.Env["XDG_DATA_HOME"]; !set {
		vars = append(vars, "XDG_DATA_HOME="+cfg.Data)
	}
	for _, d := range dataVars {
		if _, set := cfg.Env[d.Env]; set || !startsPackage(cfg.Args, d.Pkg) {
			continue
		}
		to := filepath.Join(cfg.Data, d.File)
		vars = append(vars, d.Env+"="+to)
		adopt(cfg.Own, d, to)
	}
	p.Env = setEnv(p.Env, vars)
	return nil
}

// startsPackage says whether args name the package pkg (a runner's
// argument: pkg, pkg@version, --package=pkg@version).
func startsPackage(args []string, pkg string) bool {
	for _, a := range args {
		a = strings.TrimPrefix(a, "--package=")
		if a == pkg || strings.HasPrefix(a, pkg+"@") {
			return true
		}
	}
	return false
}

// adopt copies the data of d that a server kept beside its code in one
// of the app's npx install trees (own: Server.Own) — where it lived
// before bulkhead gave it a data folder — to to, when to is not there
// yet: the newest such file, a regular file that lies, as opened, in
// own (a link the server planted leads nowhere), at most maxAdopt
// bytes. Nothing else is read, and a failure leaves to absent.
func adopt(own string, d dataVar, to string) {
	if own == "" {
		return
	}
	if _, err := os.Lstat(to); err == nil {
		return
	}
	var newest string
	var when time.Time
	for _, name := range d.Old {
		ms, _ := filepath.Glob(filepath.Join(own, "runner-*", "npm", "_npx", "*", "node_modules", d.Pkg, "dist", name))
		for _, m := range ms {
			if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && fi.ModTime().After(when) {
				newest, when = m, fi.ModTime()
			}
		}
	}
	if newest == "" {
		return
	}
	src, err := os.OpenFile(newest, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer src.Close()
	// Where the open file lies, links resolved as they were when it was
	// opened: in the app's own folder, or it is not the app's data.
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", src.Fd()))
	if err != nil || !within(real, realPath(own)) {
		return
	}
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxAdopt {
		return
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	_, err = io.Copy(dst, io.LimitReader(src, maxAdopt))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(to)
	}
}
