package changes

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// groupGit sums up git's own data under each .git folder (gitData: what
// a commit, a stash or a gc writes) as one entry that says what it
// does — "1 commit on main: Fix the parser, 3 files" — not as the
// objects and refs it is made of. The rest of a git folder stays listed
// file by file.
func (r *reader) groupGit() {
	groups := map[string]*raw{}
	var order []string
	keep := r.raws[:0]
	for _, x := range r.raws {
		root, rest, ok := gitDir(x.e.Path)
		if !ok || len(rest) == 0 || !gitData[strings.TrimSuffix(rest[0], ".lock")] || x.e.Never != "" {
			keep = append(keep, x)
			continue
		}
		g := groups[root]
		if g == nil {
			g = &raw{e: permissions.ChangeEntry{Path: root, Op: "commits", Type: "folder"}}
			groups[root] = g
			order = append(order, root)
		}
		g.ops = append(g.ops, x.ops...)
		g.e.Files += max(x.e.Files, 1)
	}
	r.raws = keep
	for _, root := range order {
		g := groups[root]
		g.e.Summary = r.gitSummary(root, g.e.Files)
		r.raws = append(r.raws, g)
	}
}

// gitSummary says what the layer's changes to git's data in the git
// folder at root do: the branches it moves and the commits on them.
// git itself reads the commits (log, diff) from the objects alone — in
// a repository of bulkhead's own making whose only content is where to
// find the objects: no config, hook or attribute of the app's is read.
func (r *reader) gitSummary(root string, files int) string {
	before, headBefore := r.refs(root, false)
	after, headAfter := r.refs(root, true)
	var names []string
	for n := range after {
		names = append(names, n)
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	g := r.git(root)
	defer g.close()
	var parts []string
	for _, n := range names {
		old, new := before[n], after[n]
		if old == new {
			continue
		}
		short := strings.TrimPrefix(strings.TrimPrefix(n, "refs/heads/"), "refs/")
		switch {
		case new == "":
			parts = append(parts, "removed "+short)
		case old == "":
			// what the new branch holds that no branch held before
			not := []string{"--not"}
			for _, o := range before {
				not = append(not, o)
			}
			if len(not) == 1 {
				not = nil
			}
			count := g.run(append([]string{"rev-list", "--count", new}, not...)...)
			subjects := g.run(append([]string{"log", "-n", "3", "--format=%s", new}, not...)...)
			if count == "" || subjects == "" {
				parts = append(parts, fmt.Sprintf("new %s at %s", short, g.subject(new)))
				break
			}
			parts = append(parts, fmt.Sprintf("%s on the new %s: %s", plural(atoi(count), "commit"), short, strings.Join(strings.Split(subjects, "\n"), "; ")))
		default:
			count := g.run("rev-list", "--count", old+".."+new)
			back := g.run("rev-list", "--count", new+".."+old)
			subjects := g.run("log", "-n", "3", "--format=%s", old+".."+new)
			nfiles := g.run("diff", "--no-ext-diff", "--no-textconv", "--name-only", old, new)
			switch {
			case count == "" || subjects == "" && count != "0":
				parts = append(parts, fmt.Sprintf("%s moved from %.7s to %.7s", short, old, new))
			case back != "0" && back != "":
				parts = append(parts, fmt.Sprintf("%s rewritten: %s of its commits replaced by %s", short, back, plural(atoi(count), "commit")))
			default:
				s := fmt.Sprintf("%s on %s: %s", plural(atoi(count), "commit"), short, strings.Join(strings.Split(subjects, "\n"), "; "))
				if nfiles != "" {
					s += fmt.Sprintf(", %s", plural(len(strings.Split(nfiles, "\n")), "file"))
				}
				parts = append(parts, s)
			}
		}
	}
	if headBefore != headAfter && headAfter != "" {
		parts = append(parts, "now on "+strings.TrimPrefix(headAfter, "refs/heads/"))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("git's data changed (%s: index, objects or logs), no branch moved", plural(files, "file")))
	}
	s := clean(strings.Join(parts, "; "))
	if utf8.RuneCountInString(s) > 400 {
		s = string([]rune(s)[:400]) + "…"
	}
	return s
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}

func atoi(s string) int {
	n := 0
	fmt.Sscanf(s, "%d", &n)
	return n
}

// refs are the branches and tags of the git folder at root, by name,
// and what HEAD names: as the app left them (merged) or as the folder
// holds them.
func (r *reader) refs(root string, merged bool) (map[string]string, string) {
	out := map[string]string{}
	if b, ok := r.readView(root+"/packed-refs", merged); ok {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) == 2 && isHash(f[0]) && strings.HasPrefix(f[1], "refs/") {
				out[f[1]] = f[0]
			}
		}
	}
	n := 0
	var walk func(rel string)
	walk = func(rel string) {
		for _, name := range r.listView(root+"/"+rel, merged) {
			if n++; n > 10_000 {
				return
			}
			q := rel + "/" + name
			fp, _ := r.mergedStat(root + "/" + q)
			if !merged {
				fp, _ = statAt(r.lo, root+"/"+q)
			}
			switch fp.Type {
			case "folder":
				walk(q)
			case "file":
				if b, ok := r.readView(root+"/"+q, merged); ok && isHash(strings.TrimSpace(string(b))) {
					out[q] = strings.TrimSpace(string(b))
				}
			}
		}
	}
	walk("refs")
	head := ""
	if b, ok := r.readView(root+"/HEAD", merged); ok {
		head = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "ref:"))
	}
	return out, head
}

func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// gitRunner runs git on a repository of bulkhead's own making that
// finds its objects in the folder's git folder and in the layer's.
type gitRunner struct {
	dir string
	ok  bool
}

func (r *reader) git(root string) *gitRunner {
	g := &gitRunner{}
	if _, err := exec.LookPath("git"); err != nil {
		return g
	}
	dir, err := os.MkdirTemp(r.s.root, ".git-view-")
	if err != nil {
		return g
	}
	g.dir = dir
	var alternates []string
	// the folder's objects first: an object the layer removed (a gc)
	// is still read from there
	if fp, _ := statAt(r.lo, root+"/objects"); fp.Type == "folder" {
		alternates = append(alternates, filepath.Join(r.l.Folder, filepath.FromSlash(root), "objects"))
	}
	if fp, _ := statAt(r.up, root+"/objects"); fp.Type == "folder" {
		alternates = append(alternates, filepath.Join(r.l.upper(), filepath.FromSlash(root), "objects"))
	}
	for _, d := range []string{"objects/info", "refs"} {
		_ = os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	_ = os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/none\n"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tbare = true\n"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(strings.Join(alternates, "\n")+"\n"), 0o600)
	g.ok = len(alternates) > 0
	return g
}

func (g *gitRunner) close() {
	if g.dir != "" {
		_ = os.RemoveAll(g.dir)
	}
}

// run is git's output, trimmed; "" when git failed.
func (g *gitRunner) run(args ...string) string {
	if !g.ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + g.dir, "--no-replace-objects"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + g.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_ATTR_NOSYSTEM=1", "GIT_OPTIONAL_LOCKS=0"}
	var out bytes.Buffer
	cmd.Stdout = &limited{w: &out, n: 64 << 10}
	if err := cmd.Run(); err != nil {
		return ""
	}
	return strings.TrimSpace(out.String())
}

// subject is a commit's subject, or its hash where git cannot say.
func (g *gitRunner) subject(h string) string {
	if s := g.run("log", "-n", "1", "--format=%s", h); s != "" {
		return s
	}
	return fmt.Sprintf("%.7s", h)
}

type limited struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
