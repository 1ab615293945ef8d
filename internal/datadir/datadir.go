// Package datadir opens bulkhead's data directory safely: a folder of
// the user's that no one else can write, made the user's alone (0700)
// when others could read it. The serving process and its clients both
// open it here, so that neither works in a folder another user could
// have planted a socket or a key in.
//
// Its functions are safe for concurrent use.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is matched by the error for a data directory that is not
// safely the user's: another user's, or writable by others.
var ErrUnsafe = errors.New("the data directory is not safely yours")

// Open opens the folder at path and checks it: the user must own it and
// group and others must not write it (else ErrUnsafe, naming the folder,
// its owner and its mode); one that group or others may read is made
// 0700. Work in the folder should go through the open file (openat, or
// /proc/self/fd paths), so that a folder swapped in under the same name
// afterwards is not used.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	mode := fs.FileMode(st.Mode & 0o7777)
	switch {
	case int(st.Uid) != os.Getuid():
		f.Close()
		return nil, fmt.Errorf("%w: %s belongs to %s, not to you (mode %04o); bulkhead keeps your chats, grants and its socket only in a folder of your own: give another --data-dir", ErrUnsafe, path, Owner(st.Uid), mode)
	case mode&0o022 != 0:
		f.Close()
		return nil, fmt.Errorf("%w: %s (yours, mode %04o) can be written by other users, who could put their own socket or files in it; `chmod 700 %s` if it is yours alone, or give another --data-dir", ErrUnsafe, path, mode, path)
	case mode&0o077 != 0:
		if err := unix.Fchmod(int(f.Fd()), 0o700); err != nil {
			f.Close()
			return nil, fmt.Errorf("make %s yours alone (0700): %w", path, err)
		}
	}
	return f, nil
}

// Create makes the folder at path (0700, with its parents) if it is not
// there, and opens it as Open does.
func Create(path string) (*os.File, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", path, err)
	}
	return Open(path)
}

// Owner names a uid: its user name and number.
func Owner(uid uint32) string {
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}
