package changes

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// What the change dialog warns of (docs/sandbox.md, "What is warned"):
// an entry something else may run or trust later. The list below
// decides only the warning: every entry is shown, warned or not, and a
// set with a warned entry asks every time, whatever grant the app holds.

// toolFiles are file names whose very name makes a tool of the user's
// run what they say (a build, a task runner, a package manager's
// scripts, a hook manager).
var toolFiles = map[string]string{
	"makefile": "make", "gnumakefile": "make", "justfile": "just", "taskfile.yml": "task", "taskfile.yaml": "task",
	"package.json": "npm (its scripts)", "lefthook.yml": "lefthook", "lefthook.yaml": "lefthook",
	"lint-staged.config.js": "lint-staged", "lint-staged.config.mjs": "lint-staged", "build.rs": "cargo",
	"setup.py": "pip", "pyproject.toml": "pip and build tools", "conftest.py": "pytest", "noxfile.py": "nox", "tox.ini": "tox",
	"cargo.toml": "cargo", "go.mod": "go", "cmakelists.txt": "cmake", "rakefile": "rake", "gemfile": "bundler",
	"pom.xml": "maven", "build.gradle": "gradle", "build.gradle.kts": "gradle", "gradlew": "you, as gradle", "mvnw": "you, as maven",
	"dockerfile": "docker", "docker-compose.yml": "docker compose", "compose.yaml": "docker compose", "flake.nix": "nix",
}

// gitData are the entries of a git folder that a commit, a merge, a
// stash or a gc writes: shown together as what they do (the commits),
// not file by file. The rest of a git folder — hooks, config, info,
// modules, a rebase's todo list — is shown file by file.
var gitData = map[string]bool{
	"objects": true, "refs": true, "logs": true, "index": true, "HEAD": true, "ORIG_HEAD": true, "FETCH_HEAD": true,
	"COMMIT_EDITMSG": true, "packed-refs": true, "MERGE_HEAD": true, "MERGE_MSG": true, "MERGE_MODE": true,
	"AUTO_MERGE": true, "CHERRY_PICK_HEAD": true, "REVERT_HEAD": true, "REBASE_HEAD": true, "gc.pid": true, "gc.log": true,
}

// gitDir splits p at its first .git folder: the folder (".git",
// "sub/.git") and what lies below it.
func gitDir(p string) (string, []string, bool) {
	els := strings.Split(p, "/")
	for i, e := range els {
		if e == ".git" {
			return strings.Join(els[:i+1], "/"), els[i+1:], true
		}
	}
	return "", nil, false
}

type warner struct {
	r *reader
	// layouts: folders laid out as a git repository (HEAD, objects,
	// refs), by path: true where one is.
	layouts map[string]bool
	// hooks are folders git runs hooks from (core.hooksPath), with the
	// config that names them.
	hooks map[string]string
	// keep are bulkhead's own files, relative to the folder; trees the
	// user's HomeTrees below it.
	keep, trees []string
}

func (r *reader) warner() *warner {
	w := &warner{r: r, layouts: map[string]bool{}, hooks: map[string]string{}}
	for _, k := range r.s.opts.Keep {
		if rel, err := filepath.Rel(r.l.Folder, k); err == nil && !strings.HasPrefix(rel, "..") {
			w.keep = append(w.keep, filepath.ToSlash(rel))
		}
	}
	w.trees = sandbox.HomeTreesBelow(r.l.Folder, r.s.opts.Home)
	// Every git config the set could touch: the folder's own, each git
	// folder an entry lies in, each repository laid out elsewhere.
	configs := map[string]bool{".git/config": true}
	for _, x := range r.raws {
		if root, _, ok := gitDir(x.e.Path); ok {
			configs[root+"/config"] = true
		}
		for d := path.Dir(x.e.Path); ; d = path.Dir(d) {
			if w.layout(d) {
				configs[path.Join(d, "config")] = true
			}
			if d == "." || d == "/" {
				break
			}
		}
	}
	for c := range configs {
		work := path.Dir(path.Dir(c)) // the work tree of <tree>/.git/config
		if path.Base(path.Dir(c)) != ".git" {
			work = path.Dir(c) // a repository laid out without a .git folder
		}
		for _, view := range []bool{false, true} {
			b, ok := r.readView(c, view)
			if !ok {
				continue
			}
			for _, hp := range hooksPaths(string(b)) {
				rel := hp
				if path.IsAbs(hp) {
					r2, err := filepath.Rel(r.l.Folder, hp)
					if err != nil || strings.HasPrefix(r2, "..") {
						continue
					}
					rel = filepath.ToSlash(r2)
				} else {
					rel = path.Clean(path.Join(work, hp))
				}
				w.hooks[strings.TrimPrefix(rel, "./")] = c
			}
		}
	}
	return w
}

// layout reports whether the folder d (relative, "." the root) is laid
// out as a git repository once the layer is over it: git's discovery
// takes such a folder for one, whatever its name.
func (w *warner) layout(d string) bool {
	if d == "" {
		d = "."
	}
	if v, ok := w.layouts[d]; ok {
		return v
	}
	rel := func(n string) string {
		if d == "." {
			return n
		}
		return d + "/" + n
	}
	head, _ := w.r.mergedStat(rel("HEAD"))
	objects, _ := w.r.mergedStat(rel("objects"))
	refs, _ := w.r.mergedStat(rel("refs"))
	v := head.Type == "file" && objects.Type == "folder" && refs.Type == "folder"
	w.layouts[d] = v
	return v
}

// hooksPaths are the core.hooksPath values a git config names.
func hooksPaths(config string) []string {
	var out []string
	section := ""
	for _, line := range strings.Split(config, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(strings.Fields(strings.Trim(line, "[]") + " ")[0], `"`))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != "core" || !strings.EqualFold(strings.TrimSpace(k), "hookspath") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

func under(p, dir string) bool {
	return dir == "." || dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

// warn sets x's warnings and conflict.
func (w *warner) warn(x *raw) {
	e := &x.e
	add := func(format string, a ...any) { e.Warnings = append(e.Warnings, fmt.Sprintf(format, a...)) }
	p := e.Path
	if e.Never != "" {
		return
	}
	if e.Op == "commits" {
		add("git's own data: git reads it on every command you run in this work tree")
	} else if runs, ok := sandbox.Runs(p); ok {
		add("%s", runs)
	}
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if path.Base(d) != ".git" && w.layout(d) {
			add("in a git repository laid out at %s/: git takes that folder for a repository when you run git in it or below, and its config can name programs git starts", d)
			break
		}
	}
	if e.Type == "folder" && path.Base(p) != ".git" && w.layout(p) {
		add("a git repository laid out at %s/: git takes it for one when you run git in it or below, and its config can name programs git starts", p)
	}
	for dir, cfg := range w.hooks {
		if under(p, dir) {
			add("git runs the files in %s/ as hooks (core.hooksPath in %s)", dir, cfg)
		}
	}
	for _, k := range w.keep {
		if p == k || under(k, p) {
			add("bulkhead's own configuration: what it says decides what apps may do")
		}
	}
	for _, t := range w.trees {
		if under(p, t) {
			add("in %s, from which your tools run code", t)
		}
	}
	if len(e.Warnings) == 0 {
		if tool, ok := toolFiles[strings.ToLower(path.Base(p))]; ok {
			add("%s runs what this file says", tool)
		} else if dot := dotted(p); dot != "" && e.Op != "commits" {
			add("a dotfile (%s): programs read their settings, and run hooks, from such names", dot)
		}
	}
	switch {
	case e.Type == "file" && e.Op != "removed" && x.up.Mode&0o6000 != 0:
		add("set-id bit (%s): it lands without it", e.Mode)
	case e.Type == "file" && e.Op != "removed" && x.up.Mode&0o111 != 0 && (x.lo.Type != "file" || x.lo.Mode&0o111 == 0 || e.Op == "changed"):
		add("executable")
	case e.Type == "folder" && e.Op != "removed" && x.up.Mode&0o6000 != 0:
		add("set-id bit on a folder (%s): it lands without it", e.Mode)
	}
	if e.Type == "link" {
		add("a link to %s: applied as a link, never followed", clean(e.Target))
		if x.lo.Exists() && x.lo.Type != "link" {
			add("your %s is replaced by a link", x.lo.Type)
		}
	}
	if x.lo.Type == "file" && x.lo.Nlink > 1 {
		switch e.Op {
		case "removed", "renamed":
			add("your file has %d names: only this one goes, the others keep it", x.lo.Nlink)
		default:
			add("your file has %d names: accepting writes a new file under this one alone, the others keep the old content", x.lo.Nlink)
		}
	}
	if x.up.Type == "file" && x.up.Nlink > 1 {
		if others := w.r.inodes[x.up.Ino]; len(others) > 1 {
			add("the app made it a hard link (with %s): applied as a file of its own", strings.Join(clip(others, 3, p), ", "))
		}
	}
	if x.lo.Exists() && x.lo.Ctime > w.r.l.Created.UnixNano() && e.Op != "commits" {
		e.Conflict = fmt.Sprintf("changed in your folder after the app started (%s): accepting replaces your version", since(w.r.l.Created))
	}
}

// Exists reports whether there is a node.
func (f fingerprint) Exists() bool { return f.exists() }

// dotted is the first element of p that starts with a dot.
func dotted(p string) string {
	for _, e := range strings.Split(p, "/") {
		if strings.HasPrefix(e, ".") && e != "." && e != ".." {
			return e
		}
	}
	return ""
}

func clip(ps []string, n int, self string) []string {
	var out []string
	for _, p := range ps {
		if p != self && len(out) < n {
			out = append(out, p)
		}
	}
	return out
}
