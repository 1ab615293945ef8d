package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A write or a delete changes exactly the file its path names, so that
// the dialog that named it named what changes: it goes through no
// symbolic link (which a link inside the workspace — planted by another
// app, say — could point at .git/hooks/pre-commit), and on Linux the
// open itself follows none (openat2 with RESOLVE_NO_SYMLINKS, beneath
// the workspace), so a link swapped in after the check leads nowhere.

// noLinks refuses a path of which a folder, or (unless last is false)
// the file itself, is a symbolic link; leads is where the path leads
// inside the workspace, links followed.
func noLinks(r *os.Root, rel, shown, leads string, last bool) error {
	els := strings.Split(filepath.ToSlash(rel), "/")
	for i := range els {
		if i == len(els)-1 && !last {
			break
		}
		cur := filepath.Join(els[:i+1]...)
		fi, err := r.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing below a missing folder can be a link
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%q goes through %s, a symbolic link: it leads to %s in the workspace, and bulkhead writes and deletes no file through a link; give the file's own path", shown, display(cur), display(leads))
		}
	}
	return nil
}
