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
// nothing is called). The serving process reloads what the config says
// of its apps with it (ReloadMCP).
func WatchConfig(ctx context.Context, path string, changed func()) error {
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
				if filepath.Base(ev.Name) == name {
					quiet = time.After(watchQuiet)
				}
			case <-w.Errors:
			case <-quiet:
				quiet = nil
				changed()
			}
		}
	}()
	return nil
}
