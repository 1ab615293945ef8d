package sandbox

import (
	"path"
	"strings"
)

// What outlives the call (DESIGN.md §3, invariant 10): a file an app
// writes into a folder it was granted is read later by other programs of
// the user's — git, the shell, direnv, editors, agents — which run it, or
// what it names, as the user and outside any sandbox. The set of such
// files has no end, so the guarantee is not this list: an app's writes
// are staged in a layer of its own and reach the folder only as changes
// the person accepted (overlay_linux.go, package changes). Protected is
// the list of the paths the change dialog — and the files app's write
// dialog — *warns* of, with the words of who runs them; what it misses
// is still shown before it lands.
//
// A rule's Path is matched at any depth of a granted folder (sub/.git
// as well as .git), element by element and without regard to case
// (a case-insensitive file system has one .git and .GIT); everything
// under a protected folder is protected too.

// ProtectedPath is one entry of the list.
type ProtectedPath struct {
	// Path is relative and slash-separated: ".git", ".git/hooks",
	// ".bashrc".
	Path string
	// Folder: the entry is a folder (everything in it is protected).
	Folder bool
	// Runs says who runs or trusts it, in the words a dialog shows
	// ("git runs the files in this folder: pre-commit before every
	// commit, …").
	Runs string
}

// Protected is the list. A more specific entry (".git/hooks") refines
// the words of a wider one (".git"); both protect.
var Protected = []ProtectedPath{
	{".git", true, "git reads this folder on every command you run in the work tree: its hooks run, and its config can name programs git starts (core.fsmonitor, core.hooksPath, core.pager, aliases)"},
	{".git/hooks", true, "git runs the files in this folder: pre-commit before every commit, post-checkout after every checkout, pre-push before every push"},
	{".git/config", false, "git reads this file on every command; it can name programs git starts (core.fsmonitor on every status, core.hooksPath, core.pager, aliases)"},
	{".git/info", true, "git reads its attributes and excludes on every command"},
	{".git/modules", true, "git keeps the submodules' repositories here, each with hooks and a config of its own"},
	{".gitmodules", false, "git reads the submodules it lists (their URLs and paths) when you clone or update"},
	{".gitconfig", false, "git reads it as your configuration (it can name programs git starts) where it is your home's or included"},
	{".envrc", false, "direnv runs this file when you enter the folder"},
	{".vscode", true, "VS Code runs the tasks and applies the settings in this folder when you open the folder"},
	{".idea", true, "JetBrains IDEs run the configurations in this folder"},
	{".devcontainer", true, "VS Code and other tools build and start the container this folder describes"},
	{".claude", true, "Claude Code runs the hooks, commands and agents this folder defines"},
	{".mcp.json", false, "agents (Claude Code and others) start the MCP servers this file lists"},
	{".pre-commit-config.yaml", false, "pre-commit runs the hooks it lists before every commit"},
	{".husky", true, "husky's hooks in this folder run on every commit"},
	{".npmrc", false, "npm reads it in this folder: the registry it downloads from, scripts, tokens"},
	{".bashrc", false, "bash runs this file at the start of every interactive shell"},
	{".bash_profile", false, "bash runs this file at every login"},
	{".bash_login", false, "bash runs this file at every login"},
	{".bash_logout", false, "bash runs this file when a login shell ends"},
	{".profile", false, "your login shell runs this file at every login"},
	{".zshrc", false, "zsh runs this file at the start of every interactive shell"},
	{".zshenv", false, "zsh runs this file at the start of every shell"},
	{".zprofile", false, "zsh runs this file at every login"},
	{".zlogin", false, "zsh runs this file at every login"},
	{".zlogout", false, "zsh runs this file when a login shell ends"},
}

// Protects says whether rel — a path relative to a folder the app may
// write, slash- or OS-separated — is on the list, and the entry that
// says best why (the longest that matches).
func Protects(rel string) (ProtectedPath, bool) {
	els := elements(rel)
	var best ProtectedPath
	found := false
	for i := range els {
		for _, p := range Protected {
			pe := strings.Split(p.Path, "/")
			if len(pe) > len(els)-i || !sameElements(els[i:i+len(pe)], pe) {
				continue
			}
			if !found || len(p.Path) > len(best.Path) {
				best, found = p, true
			}
		}
	}
	return best, found
}

// elements splits a relative path into its names ("." and "" dropped).
func elements(rel string) []string {
	rel = strings.ReplaceAll(rel, "\\", "/")
	rel = path.Clean("/" + rel)
	var out []string
	for _, e := range strings.Split(rel, "/") {
		if e != "" && e != "." {
			out = append(out, e)
		}
	}
	return out
}

func sameElements(a, b []string) bool {
	for i := range b {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// ProtectedNames lists the entries' paths, for doctor and the docs.
func ProtectedNames() []string {
	out := make([]string, 0, len(Protected))
	for _, p := range Protected {
		out = append(out, p.Path)
	}
	return out
}

// HomeTrees are the folders of the user's home (relative to it) from
// which the user's tools run code, or which they trust: package caches
// and installed tools, the programs on PATH, shell, desktop and editor
// configuration, ssh and gpg keys, cloud credentials that name helper
// programs. An app may not be granted one to write: a grant that
// reaches into one is refused (InHomeTree); a change in one, staged in a
// folder it may write that holds the home, is warned of (HomeTreesBelow).
var HomeTrees = []string{
	".npm", ".cache", ".config", ".local/bin", ".local/lib", ".local/share/applications", ".local/share/systemd", ".local/share/pnpm",
	"bin", "go", ".bun", ".cargo", ".rustup", ".pyenv", ".nvm", ".volta", ".deno", ".yarn", ".gem", ".m2", ".gradle",
	".ssh", ".gnupg", ".docker", ".kube", ".aws", ".vscode", ".vscode-server", ".cursor", ".claude",
}

// InHomeTree says which of the user's HomeTrees dir lies in (or is),
// and "" when none; dir and home are absolute and clean.
func InHomeTree(dir, home string) string {
	if home == "" {
		return ""
	}
	for _, t := range HomeTrees {
		tree := path.Join(home, t)
		if dir == tree || strings.HasPrefix(dir, tree+"/") {
			return tree
		}
	}
	return ""
}

// HomeTreesBelow are the HomeTrees that lie inside dir, relative to it
// (a folder granted to write that holds the user's home, or part of it).
func HomeTreesBelow(dir, home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, t := range HomeTrees {
		tree := path.Join(home, t)
		if rel, ok := strings.CutPrefix(tree, dir+"/"); ok {
			out = append(out, rel)
		} else if dir == "/" {
			out = append(out, strings.TrimPrefix(tree, "/"))
		}
	}
	return out
}

// hooks says when git runs each of its hooks.
var hooks = map[string]string{
	"pre-commit": "before every commit", "prepare-commit-msg": "on every commit", "commit-msg": "on every commit",
	"post-commit": "after every commit", "pre-push": "before every push", "post-checkout": "after every checkout",
	"post-merge": "after every merge", "pre-rebase": "before every rebase", "post-rewrite": "after every amend or rebase",
	"pre-merge-commit": "before every merge commit", "pre-auto-gc": "before every automatic gc",
	"fsmonitor-watchman": "on every status", "reference-transaction": "on every change of a branch or tag",
	"push-to-checkout": "on every push into this repository", "post-applypatch": "after every git am",
	"applypatch-msg": "on every git am", "pre-applypatch": "on every git am",
}

// Runs says who runs or trusts the file at rel (relative to a folder an
// app may write), in the words a dialog shows — "git runs this file
// before every commit" — and whether it is protected at all.
func Runs(rel string) (string, bool) {
	p, ok := Protects(rel)
	if !ok {
		return "", false
	}
	els := elements(rel)
	if n := len(els); p.Path == ".git/hooks" && n >= 3 && strings.EqualFold(els[n-2], "hooks") && strings.EqualFold(els[n-3], ".git") {
		if when, ok := hooks[strings.TrimSuffix(els[n-1], ".sample")]; ok && !strings.HasSuffix(els[n-1], ".sample") {
			return "git runs this file " + when, true
		}
	}
	return p.Runs, true
}
