package sandbox

import (
	"path"
	"strings"
)

// What outlives the call (DESIGN.md §3, invariant 10): a file an app
// writes into a folder it was granted is read later by other programs of
// the user's — git, the shell, direnv, editors, agents — which run it, or
// what it names, as the user and outside any sandbox. Protected is the one
// list of such paths. Inside every folder an out-of-process app may
// write, each stays read-only to it: it cannot be written, created when
// missing, removed, replaced, renamed or linked, and a folder that holds
// one cannot be renamed (guard_linux.go does it for the sandbox; the
// files app and the hub's dialog read the same list through Protects).
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

// gitCommits are the entries of a .git folder that a command may write
// when its policy lets it make commits (Policy.GitCommits: the shell app,
// whose commands the user approved one by one): objects, refs, the index
// and what a commit, merge or rebase keeps beside them. Never the hooks,
// the config, info/ or modules/.
var gitCommits = []string{
	"objects", "refs", "logs", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG", "packed-refs",
	"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
	"rebase-merge", "rebase-apply", "sequencer", "rr-cache", "gc.pid", "gc.log", "shallow",
}

// Protects says whether rel — a path relative to a folder the app may
// write, slash- or OS-separated — is protected, and the entry that says
// best why (the longest that matches). commits lets git's commit data
// through (gitCommits).
func Protects(rel string, commits bool) (ProtectedPath, bool) {
	els := elements(rel)
	var best ProtectedPath
	found := false
	for i := range els {
		for _, p := range Protected {
			pe := strings.Split(p.Path, "/")
			if len(pe) > len(els)-i || !sameElements(els[i:i+len(pe)], pe) {
				continue
			}
			if commits && pe[0] == ".git" && len(pe) == 1 && gitCommit(els[i+1:]) {
				continue
			}
			if !found || len(p.Path) > len(best.Path) {
				best, found = p, true
			}
		}
	}
	return best, found
}

// gitCommit says whether rest, the path below a .git folder, is commit
// data (gitCommits, or the lock file of one).
func gitCommit(rest []string) bool {
	if len(rest) == 0 {
		return false // .git itself
	}
	name := strings.TrimSuffix(rest[0], ".lock")
	for _, g := range gitCommits {
		if rest[0] == g || name == g {
			return true
		}
	}
	return false
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
// programs. An app may not write in one: a grant that reaches into one
// is refused (InHomeTree), and a folder it may write that holds one
// keeps it read-only (the guard), as it keeps Protected.
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

// homeTreesBelow are the HomeTrees that lie inside dir, relative to it
// (a folder granted to write that holds the user's home, or part of it).
func homeTreesBelow(dir, home string) []string {
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
	p, ok := Protects(rel, false)
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
