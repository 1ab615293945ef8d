//go:build linux

package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// mountOverlay mounts, over dir itself (in this private mount
// namespace), a kernel overlay of the layer o over dir: the real folder
// below, read-only; o.Upper above, where every write goes (a changed
// file is copied up first, a removed one leaves a whiteout). The command
// sees its own writes at once and at the kernel's speed; nothing it
// writes touches the real folder.
//
// The three folders are opened here, once, and named to the kernel by
// their descriptors (/proc/self/fd/N): no name in a path (a comma, a
// colon, a link swapped in after bulkhead checked it) can change what is
// mounted. The mount is nosuid and nodev, and uses the user.* extended
// attributes (userxattr), as an overlay made in a user namespace must.
func mountOverlay(dir string, o Overlay) error {
	if o.Upper == "" || o.Work == "" {
		return errors.New("its layer names no upper or work folder")
	}
	open := func(p string, flags int) (int, error) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|flags, 0)
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", p, err)
		}
		return fd, nil
	}
	lower, err := open(dir, 0)
	if err != nil {
		return err
	}
	defer unix.Close(lower)
	upper, err := open(o.Upper, unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer unix.Close(upper)
	work, err := open(o.Work, unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer unix.Close(work)
	opts := fmt.Sprintf("lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d,workdir=/proc/self/fd/%d,userxattr", lower, upper, work)
	if err := unix.Mount("overlay", dir, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount an overlay: %w", err)
	}
	return nil
}
