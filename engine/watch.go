package engine

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchQuiet is how long a config file must stay unchanged after an
// event before it is read again (an editor writes, renames and chmods in
// a burst).
const watchQuiet = 200 * time.Millisecond

// WatchConfig calls changed each time the file at path is written,
// replaced, created or removed, once the burst of events is over, until
// ctx ends. It watches the file's folder (editors replace files by
// renaming); a folder that does not exist is not watched (nil, and
// nothing is called). A file that is a link (as dotfile managers make
// it) is watched through it as well: the folder of the file it resolves
// to is watched too, and a link pointed elsewhere is followed there. The
// serving process reloads what the config says of its apps with it
// (ReloadMCP).
func WatchConfig(ctx context.Context, path string, changed func()) error {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	dir, name := filepath.Split(filepath.Clean(path))
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return err
	}
	f := &watchedFile{w: w, path: path, file: filepath.Join(resolved(dir), name), dir: resolved(dir)}
	f.follow()
	go func() {
		defer w.Close()
		var quiet <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if f.is(ev.Name) {
					quiet = time.After(watchQuiet)
				}
			case <-w.Errors:
			case <-quiet:
				quiet = nil
				f.follow() // the link may point elsewhere now
				changed()
			}
		}
	}()
	return nil
}

// watchedFile is the config file as its watcher sees it: the file at its
// path, in its folder (resolved), and the file that path resolves to
// where it is a link, whose folder is watched too where it is another.
// Only the watcher's goroutine uses it, once WatchConfig has returned.
type watchedFile struct {
	w      *fsnotify.Watcher
	path   string // as given (absolute)
	file   string // path in its folder, resolved
	dir    string // path's folder, resolved (watched)
	target string // the file path resolves to ("" for none: it does not exist)
	extra  string // target's folder, watched besides dir ("" for none)
}

// is reports whether an event's file is the config file or the file its
// link resolves to.
func (f *watchedFile) is(event string) bool {
	p := filepath.Join(resolved(filepath.Dir(event)), filepath.Base(event))
	return p == f.file || f.target != "" && p == f.target
}

// follow resolves the path again, and watches the folder of the file it
// resolves to now (and no longer the folder of the one before).
func (f *watchedFile) follow() {
	t, err := filepath.EvalSymlinks(f.path)
	if err != nil {
		t = ""
	}
	f.target = t
	td := ""
	if t != "" && filepath.Dir(t) != f.dir {
		td = filepath.Dir(t)
	}
	if td == f.extra {
		return
	}
	if f.extra != "" {
		_ = f.w.Remove(f.extra)
	}
	f.extra = ""
	if td != "" && f.w.Add(td) == nil {
		f.extra = td
	}
}

// resolved is p with its links resolved, or p where it cannot be.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
