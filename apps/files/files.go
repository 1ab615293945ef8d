// Package files is the built-in files app: it lists, reads, searches,
// writes and deletes files inside one workspace folder and nowhere else.
//
// Every path is taken relative to the workspace root. A path that leaves
// the root — with "..", as an absolute path elsewhere, or through a
// symbolic link anywhere along it — is refused before anything is opened,
// and every operation then goes through an os.Root, so a link swapped in
// between the check and the use cannot lead outside either. A file with
// more than one name (a hard link, which may be to a file outside) is
// neither read nor written.
//
// An App holds no open files between calls; its methods are safe for
// concurrent use.
package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// Limits of the app.
const (
	DefaultMaxRead = 256 << 10 // bytes returned by read
	maxSearchFile  = 1 << 20   // larger files are skipped by search
	maxMatches     = 100
	maxEntries     = 1000
	maxLineText    = 300 // bytes of a matching line returned by search
	sniffLen       = 8 << 10
)

// Options tune the app.
type Options struct {
	// MaxRead is the most bytes read returns; longer files come back
	// truncated. 0 means DefaultMaxRead.
	MaxRead int64
}

// App is the files app, confined to one workspace folder.
type App struct {
	root string // absolute, as given
	real string // root with its symbolic links resolved
	opts Options
	man  apps.Manifest
}

var _ apps.App = (*App)(nil)

// New returns the files app for the workspace at root.
func New(root string, opts Options) *App {
	if opts.MaxRead <= 0 {
		opts.MaxRead = DefaultMaxRead
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = filepath.Clean(root)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	return &App{root: abs, real: real, opts: opts, man: manifest()}
}

// Manifest declares the app.
func (a *App) Manifest() apps.Manifest { return a.man }

// Call runs one function.
func (a *App) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	return apps.Dispatch(ctx, a.man, a.handlers(), c)
}

type pathArgs struct{ Path string }

func (a *App) handlers() map[string]apps.Handler {
	return map[string]apps.Handler{
		"list": apps.Typed(func(_ context.Context, _ apps.Call, p pathArgs) (any, error) { return a.list(p.Path) }),
		"read": apps.Typed(func(_ context.Context, _ apps.Call, p pathArgs) (any, error) { return a.read(p.Path) }),
		"search": apps.Typed(func(ctx context.Context, _ apps.Call, p struct{ Query, Path string }) (any, error) {
			return a.search(ctx, p.Query, p.Path)
		}),
		"write": apps.Typed(func(_ context.Context, _ apps.Call, p struct{ Path, Content string }) (any, error) {
			return a.write(p.Path, p.Content)
		}),
		"delete": apps.Typed(func(_ context.Context, _ apps.Call, p pathArgs) (any, error) { return a.delete(p.Path) }),
	}
}

type entry struct {
	Name    string `json:"name"`
	Dir     bool   `json:"dir"`
	Size    int64  `json:"size,omitempty"`
	Symlink bool   `json:"symlink,omitempty"`
}

type listResult struct {
	Path      string  `json:"path"`
	Entries   []entry `json:"entries"`
	Truncated bool    `json:"truncated,omitempty"`
}

func (a *App) list(p string) (listResult, error) {
	r, rel, shown, err := a.open(p, true)
	if err != nil {
		return listResult{}, err
	}
	defer r.Close()
	d, err := openNonblock(r, rel)
	if err != nil {
		return listResult{}, failure("list", shown, err)
	}
	defer d.Close()
	if fi, err := d.Stat(); err == nil && !fi.IsDir() {
		return listResult{}, fmt.Errorf("%q is a file, not a folder; use read", shown)
	}
	des, err := d.ReadDir(-1)
	if err != nil {
		return listResult{}, failure("list", shown, err)
	}
	res := listResult{Path: shown, Entries: []entry{}}
	for _, de := range sortedEntries(des) {
		if len(res.Entries) == maxEntries {
			res.Truncated = true
			break
		}
		e := entry{Name: de.Name(), Dir: de.IsDir(), Symlink: de.Type()&fs.ModeSymlink != 0}
		if de.Type().IsRegular() {
			if fi, err := de.Info(); err == nil {
				e.Size = fi.Size()
			}
		}
		res.Entries = append(res.Entries, e)
	}
	return res, nil
}

type readResult struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
}

func (a *App) read(p string) (readResult, error) {
	r, rel, shown, err := a.open(p, true)
	if err != nil {
		return readResult{}, err
	}
	defer r.Close()
	f, err := openNonblock(r, rel)
	if err != nil {
		return readResult{}, failure("read", shown, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return readResult{}, failure("read", shown, err)
	}
	if fi.IsDir() {
		return readResult{}, fmt.Errorf("%q is a folder; use list", shown)
	}
	if !fi.Mode().IsRegular() {
		return readResult{}, fmt.Errorf("%q is not a regular file", shown)
	}
	if n := links(fi); n > 1 {
		// Another name, perhaps outside the workspace, shares this file's
		// content: reading it here would read that one.
		return readResult{}, fmt.Errorf("%q has %d other names (hard links), which may lie outside the workspace; it is not read", shown, n-1)
	}
	data, err := io.ReadAll(io.LimitReader(f, a.opts.MaxRead+1))
	if err != nil {
		return readResult{}, failure("read", shown, err)
	}
	truncated := int64(len(data)) > a.opts.MaxRead
	if truncated {
		data = cutRunes(data[:a.opts.MaxRead])
	}
	if !isText(data) {
		return readResult{}, fmt.Errorf("%q is a binary file, not text; it cannot be read", shown)
	}
	return readResult{Path: shown, Content: string(data), Size: fi.Size(), Truncated: truncated}, nil
}

type writeResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"`
}

func (a *App) write(p, content string) (writeResult, error) {
	// Wherever its links lead must stay inside; then the path as named,
	// links not followed, is the file written: the one the dialog named
	// (nolinks.go).
	r, leads, _, err := a.open(p, true)
	if err != nil {
		return writeResult{}, err
	}
	r.Close()
	r, rel, shown, err := a.open(p, false)
	if err != nil {
		return writeResult{}, err
	}
	defer r.Close()
	if rel == "." {
		return writeResult{}, errors.New("give the path of a file to write")
	}
	if err := noLinks(r, rel, shown, leads, true); err != nil {
		return writeResult{}, err
	}
	created := false
	fi, err := r.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case err != nil:
		return writeResult{}, failure("write", shown, err)
	case fi.IsDir():
		return writeResult{}, fmt.Errorf("%q is a folder; it cannot be written", shown)
	case !fi.Mode().IsRegular():
		return writeResult{}, fmt.Errorf("%q is not a regular file", shown)
	case links(fi) > 1:
		// Another name, perhaps outside the workspace, shares this file's
		// content: writing through this one would change that too.
		return writeResult{}, fmt.Errorf("%q has %d other names (hard links), which may lie outside the workspace; it is not written", shown, links(fi)-1)
	}
	if err := a.writeFile(rel, []byte(content)); err != nil {
		return writeResult{}, failure("write", shown, err)
	}
	return writeResult{Path: shown, Bytes: len(content), Created: created}, nil
}

type okResult struct {
	OK bool `json:"ok"`
}

func (a *App) delete(p string) (okResult, error) {
	// The whole path must stay inside, its last link followed too; what is
	// removed is the named entry itself, so deleting a link removes the link.
	r, leads, shown, err := a.open(p, true)
	if err != nil {
		return okResult{}, err
	}
	r.Close()
	r, rel, _, err := a.open(p, false)
	if err != nil {
		return okResult{}, err
	}
	defer r.Close()
	if rel == "." {
		return okResult{}, errors.New("the workspace itself cannot be deleted")
	}
	if err := noLinks(r, rel, shown, leads, false); err != nil {
		return okResult{}, err
	}
	fi, err := r.Lstat(rel)
	if err != nil {
		return okResult{}, failure("delete", shown, err)
	}
	if fi.IsDir() {
		return okResult{}, fmt.Errorf("%q is a folder; only files can be deleted", shown)
	}
	if err := a.removeFile(rel); err != nil {
		return okResult{}, failure("delete", shown, err)
	}
	return okResult{OK: true}, nil
}

// links is how many names a file has (hard links); 1 when unknown.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// failure turns an os error into a short message that names the path as
// the caller gave it, never the host path of the workspace.
func failure(op, shown string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist", shown)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %q: permission denied", op, shown)
	case strings.Contains(err.Error(), "escapes"):
		return fmt.Errorf("path %q is outside the workspace", shown)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s %q: %v", op, shown, err)
}

// isText reports whether data looks like UTF-8 text: no NUL byte in its
// first few KiB and valid UTF-8 throughout.
func isText(data []byte) bool {
	head := data
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	return bytes.IndexByte(head, 0) < 0 && utf8.Valid(data)
}

// cutRunes drops an incomplete UTF-8 sequence at the end of data.
func cutRunes(data []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(data) > 0; i++ {
		r, size := utf8.DecodeLastRune(data)
		if r != utf8.RuneError || size > 1 {
			return data
		}
		data = data[:len(data)-1]
	}
	return data
}

// openNonblock opens name for reading without waiting on a named pipe or
// a device: reads of anything but regular files and folders are refused
// after the open, and the open itself must not block.
func openNonblock(r *os.Root, name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

func display(rel string) string { return path.Clean(filepath.ToSlash(rel)) }

// Explain says where a path leads and what is there now, for a dialog
// about writing or deleting it: the file a symbolic link points to, and
// whether the file exists, its size, and whether other names (hard
// links) share it.
func (a *App) Explain(_ context.Context, c apps.Call) (string, error) {
	if c.Function != "write" && c.Function != "delete" {
		return "", nil
	}
	var p struct{ Path string }
	if err := json.Unmarshal(c.Args, &p); err != nil {
		return "", err
	}
	r, rel, shown, err := a.open(p.Path, c.Function == "write")
	if err != nil {
		return "", err
	}
	defer r.Close()
	var parts []string
	if target := display(rel); target != shown {
		parts = append(parts, fmt.Sprintf("%s leads to %s in the workspace (a symbolic link)", shown, target))
	} else {
		parts = append(parts, shown+" in the workspace")
	}
	fi, err := r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parts = append(parts, "does not exist yet")
	case err != nil:
		parts = append(parts, "cannot be examined: "+err.Error())
	case fi.Mode()&fs.ModeSymlink != 0:
		parts = append(parts, "is a symbolic link")
	default:
		parts = append(parts, fmt.Sprintf("exists, %d bytes", fi.Size()))
		if n := links(fi); n > 1 {
			parts = append(parts, fmt.Sprintf("shares its content with %d other name(s) (hard links): it will not be written", n-1))
		}
	}
	return strings.Join(parts, "; "), nil
}

// Preview says what a write or a delete would change: the file as it is
// (read as read reads it, up to MaxRead) and as the call leaves it.
func (a *App) Preview(_ context.Context, c apps.Call) (apps.Preview, error) {
	if c.Function != "write" && c.Function != "delete" {
		return apps.Preview{}, nil
	}
	var p struct{ Path, Content string }
	if err := json.Unmarshal(c.Args, &p); err != nil {
		return apps.Preview{}, err
	}
	pv := apps.Preview{Path: p.Path}
	if c.Function == "write" {
		pv.After, pv.Field = p.Content, "content"
		if !isText([]byte(p.Content)) {
			pv.Unshown = "the new content is not text"
		}
	}
	r, rel, shown, err := a.open(p.Path, false)
	if err != nil {
		return pv, err
	}
	_, err = r.Lstat(rel)
	r.Close()
	pv.Path = shown
	if errors.Is(err, fs.ErrNotExist) {
		return pv, nil
	}
	pv.Exists = true
	old, err := a.read(p.Path)
	switch {
	case err != nil:
		// Not text, or not readable: the dialog says so rather than show
		// nothing.
		pv.Unshown = "its content cannot be shown: " + err.Error()
		return pv, nil
	case old.Truncated:
		pv.Exists, pv.Unshown = true, fmt.Sprintf("it is %d bytes, more than the %d a dialog shows", old.Size, a.opts.MaxRead)
		return pv, nil
	}
	pv.Before = old.Content
	return pv, nil
}
