//go:build linux

package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// beneath is how every write and delete opens: beneath the workspace,
// following no symbolic link at all.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

func (a *App) openNoFollow(rel string, flags int, mode uint32) (*os.File, error) {
	root, err := unix.Open(a.real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Resolve: beneath}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	fd, err := unix.Openat2(root, rel, &how)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// writeFile writes content to rel, making the folders it needs, through
// no link; a file with other names (hard links) is not written.
func (a *App) writeFile(rel string, content []byte) error {
	dir := filepath.Dir(rel)
	if dir != "." {
		cur := ""
		for _, el := range strings.Split(filepath.ToSlash(dir), "/") {
			cur = filepath.Join(cur, el)
			d, err := a.openNoFollow(filepath.Dir(cur), unix.O_PATH|unix.O_DIRECTORY, 0)
			if err != nil {
				return err
			}
			err = unix.Mkdirat(int(d.Fd()), el, 0o755)
			d.Close()
			if err != nil && err != unix.EEXIST {
				return &os.PathError{Op: "mkdir", Path: cur, Err: err}
			}
		}
	}
	f, err := a.openNoFollow(rel, unix.O_WRONLY|unix.O_CREAT, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("not a regular file")
	}
	if st.Nlink > 1 {
		return fmt.Errorf("it has %d other names (hard links), which may lie outside the workspace; it is not written", st.Nlink-1)
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		return err
	}
	return f.Close()
}

// removeFile removes the entry rel names (a link is removed itself),
// reaching its folder through no link.
func (a *App) removeFile(rel string) error {
	d, err := a.openNoFollow(filepath.Dir(rel), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(int(d.Fd()), filepath.Base(rel), 0); err != nil {
		if err == unix.EISDIR {
			return syscall.EISDIR
		}
		return &os.PathError{Op: "remove", Path: rel, Err: err}
	}
	return nil
}
