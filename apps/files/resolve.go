package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxLinks bounds the symbolic links followed in one path, so a loop of
// links ends in an error.
const maxLinks = 40

var errOutside = errors.New("outside the workspace")

// open opens the workspace and resolves p inside it. It returns the open
// root, p relative to it with every symbolic link resolved (the last
// element's only if followLast), and p as messages and results show it.
// A path that leaves the workspace in any way is refused.
func (a *App) open(p string, followLast bool) (*os.Root, string, string, error) {
	rel, ok := a.lexical(p)
	if !ok {
		return nil, "", p, fmt.Errorf("path %q is outside the workspace", p)
	}
	shown := display(rel)
	r, err := os.OpenRoot(a.real)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, "", shown, fmt.Errorf("the workspace cannot be opened: %v", err)
	}
	res, err := a.resolve(r, rel, followLast)
	if err != nil {
		r.Close()
		if errors.Is(err, errOutside) {
			return nil, "", shown, fmt.Errorf("path %q is outside the workspace", p)
		}
		return nil, "", shown, failure("open", shown, err)
	}
	return r, res, shown, nil
}

// lexical makes p relative to the workspace without touching the disk:
// "" is the workspace itself, an absolute path must lie under the root,
// and ".." may not climb above it.
func (a *App) lexical(p string) (string, bool) {
	if p == "" {
		return ".", true
	}
	if filepath.IsAbs(p) {
		return a.inside(p)
	}
	c := filepath.Clean(p)
	return c, filepath.IsLocal(c)
}

// inside makes an absolute path relative to the workspace, if it lies
// under the root as given or as resolved.
func (a *App) inside(abs string) (string, bool) {
	c := filepath.Clean(abs)
	for _, base := range []string{a.real, a.root} {
		if rel, err := filepath.Rel(base, c); err == nil && filepath.IsLocal(rel) {
			return rel, true
		}
	}
	return "", false
}

// resolve walks rel one element at a time through r, replacing every
// symbolic link with its target, and fails with errOutside as soon as a
// step leaves the workspace. Elements that do not exist yet are kept.
func (a *App) resolve(r *os.Root, rel string, followLast bool) (string, error) {
	todo := split(rel)
	var done []string
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", errOutside
			}
			done = done[:len(done)-1]
			continue
		}
		cur := filepath.Join(append(slices.Clone(done), c)...)
		if len(todo) == 0 && !followLast {
			done = append(done, c)
			break
		}
		fi, err := r.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			done = append(done, c)
			continue
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("too many symbolic links")
		}
		target, err := r.Readlink(cur)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			in, ok := a.inside(target)
			if !ok {
				return "", errOutside
			}
			done = nil
			target = in
		}
		todo = append(split(target), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return filepath.Join(done...), nil
}

func split(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

func sortedEntries(des []fs.DirEntry) []fs.DirEntry {
	slices.SortFunc(des, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	return des
}
