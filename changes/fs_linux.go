//go:build linux

package changes

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// The layer and the folder are read and written through descriptors,
// each path resolved beneath its root and never through a symbolic link
// (openat2: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a link the app — or
// anyone — swapped in leads nowhere outside.

const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openRoot opens dir (the folder's or the layer's root) to resolve
// beneath.
func openRoot(dir string) (int, error) {
	return unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// openAt opens rel beneath root. rel "" or "." is the root itself.
func openAt(root int, rel string, flags int, mode uint32) (int, error) {
	if rel == "" {
		rel = "."
	}
	for {
		fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: resolve})
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		return fd, err
	}
}

// fingerprint is a node as read: its type, identity, size, mode and
// times. Any write to it or its metadata changes its ctime, so an equal
// fingerprint is the same, unchanged node. Type "" is no node.
type fingerprint struct {
	Type  string `json:"type,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Size  int64  `json:"size,omitempty"`
	Mode  uint32 `json:"mode,omitempty"`
	Mtime int64  `json:"mtime,omitempty"`
	Ctime int64  `json:"ctime,omitempty"`
	Nlink uint64 `json:"nlink,omitempty"`
	Rdev  uint64 `json:"rdev,omitempty"`
}

func (f fingerprint) exists() bool { return f.Type != "" }

// same reports whether g is f unchanged (the link count aside: another
// name made or removed elsewhere is not a change of this one).
func (f fingerprint) same(g fingerprint) bool {
	f.Nlink, g.Nlink = 0, 0
	return f == g
}

func typeOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "file"
	case unix.S_IFDIR:
		return "folder"
	case unix.S_IFLNK:
		return "link"
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	}
	return "device"
}

func fingerprintOf(st *unix.Stat_t) fingerprint {
	return fingerprint{Type: typeOf(st.Mode), Ino: st.Ino, Size: st.Size, Mode: st.Mode,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Nlink: uint64(st.Nlink), Rdev: uint64(st.Rdev)}
}

// statAt is the node at rel beneath root, not following a link at its
// end: a zero fingerprint when there is none (or a link or a non-folder
// stands on its way).
func statAt(root int, rel string) (fingerprint, error) {
	fd, err := openAt(root, rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
			return fingerprint{}, nil
		}
		return fingerprint{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fingerprint{}, err
	}
	return fingerprintOf(&st), nil
}

// whiteout reports whether f is overlayfs's mark of a removal: a
// character device 0:0.
func (f fingerprint) whiteout() bool {
	return f.Type == "device" && f.Mode&unix.S_IFMT == unix.S_IFCHR && f.Rdev == 0
}

// opaque reports whether the layer's folder at rel hides the folder
// below it whole (it was removed and made again).
func opaque(root int, rel string) bool {
	fd, err := openAt(root, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	buf := make([]byte, 8)
	for _, attr := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		if n, err := unix.Fgetxattr(fd, attr, buf); err == nil && n > 0 {
			return true
		}
	}
	return false
}

// names lists the names in the folder at rel beneath root.
func names(root int, rel string) ([]string, error) {
	fd, err := openAt(root, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return f.Readdirnames(-1)
}

// readLink is the text of the link at rel.
func readLink(root int, rel string) (string, error) {
	fd, err := openAt(root, rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// openFile opens the regular file at rel for reading; what it opened
// must still be fp.
func openFile(root int, rel string, fp fingerprint) (*os.File, error) {
	fd, err := openAt(root, rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if got := fingerprintOf(&st); fp.exists() && !got.same(fp) {
		unix.Close(fd)
		return nil, errChanged
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fs.ErrInvalid
	}
	return os.NewFile(uintptr(fd), rel), nil
}

var errChanged = errors.New("it changed since it was read")

// join is rel's child name, slash-separated.
func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// parent is rel's folder ("" for the root) and its name.
func parent(rel string) (string, string) {
	d, n := path.Split(rel)
	return strings.TrimSuffix(d, "/"), n
}

func closeFD(fd int) { _ = unix.Close(fd) }
