//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The guard (invariant 10): Landlock cannot carve a read-only hole in a
// hierarchy it grants, and a bind mount needs the path to exist, so
// neither keeps an app from creating .git or .envrc where there is none
// yet. Instead, in the command's mount namespace, every folder it may
// write is served through a FUSE file system of the namespaces' first
// process, mounted over the folder itself: the command sees the folder
// at its own path, and each change it makes reaches the real folder only
// through the guard, which refuses (EACCES) any change to a Protected
// path — writing, truncating, creating, removing, renaming to or from,
// linking, changing its attributes — and the rename of a folder that
// holds one, at any depth.
//
// The guard never follows a symbolic link: every path it touches is
// opened with openat2 beneath the folder's real root (opened before the
// mount) with RESOLVE_NO_SYMLINKS, so the name it checked is the file it
// changes, whatever another process (another instance of the app, with
// a guard of its own over the same folder) swaps in meanwhile. Links the
// command itself follows are resolved by the kernel, through the guard,
// and Landlock still decides where they may lead.

// guardLimit bounds the entries a rename's walk reads to find a
// protected path below the folder it moves; a folder larger than that is
// not moved (fail closed).
const guardLimit = 20000

// guardRoot is one guarded folder.
type guardRoot struct {
	fd      int  // O_PATH of the real folder, opened before the mount
	commits bool // Policy.GitCommits
	// whole: the folder itself lies inside a protected path (a folder
	// granted as ~/project/.git/hooks, or ~/.npm): nothing in it may
	// change.
	whole bool
	// keep are the user's HomeTrees and the policy's Keep inside the
	// folder, relative to it.
	keep []string
}

// gnode is a file or folder of a guarded folder.
type gnode struct {
	gofs.Inode
	r *guardRoot
}

var (
	_ gofs.NodeLookuper      = (*gnode)(nil)
	_ gofs.NodeGetattrer     = (*gnode)(nil)
	_ gofs.NodeSetattrer     = (*gnode)(nil)
	_ gofs.NodeOpener        = (*gnode)(nil)
	_ gofs.NodeCreater       = (*gnode)(nil)
	_ gofs.NodeMkdirer       = (*gnode)(nil)
	_ gofs.NodeMknoder       = (*gnode)(nil)
	_ gofs.NodeSymlinker     = (*gnode)(nil)
	_ gofs.NodeLinker        = (*gnode)(nil)
	_ gofs.NodeUnlinker      = (*gnode)(nil)
	_ gofs.NodeRmdirer       = (*gnode)(nil)
	_ gofs.NodeRenamer       = (*gnode)(nil)
	_ gofs.NodeReadlinker    = (*gnode)(nil)
	_ gofs.NodeReaddirer     = (*gnode)(nil)
	_ gofs.NodeStatfser      = (*gnode)(nil)
	_ gofs.NodeGetxattrer    = (*gnode)(nil)
	_ gofs.NodeListxattrer   = (*gnode)(nil)
	_ gofs.NodeSetxattrer    = (*gnode)(nil)
	_ gofs.NodeRemovexattrer = (*gnode)(nil)
)

// rel is the node's path below the folder's root ("" for the root).
func (n *gnode) rel() string { return n.Path(n.Root()) }

func (n *gnode) child(name string) string { return path.Join(n.rel(), name) }

// protected says whether a change to rel is refused.
func (r *guardRoot) protected(rel string) bool {
	if r.whole {
		return true
	}
	for _, k := range r.keep {
		if rel == k || strings.HasPrefix(rel, k+"/") {
			return true
		}
	}
	_, ok := Protects(rel, r.commits)
	return ok
}

// open opens rel beneath the root, following no symbolic link (a
// trailing one is opened itself with O_PATH|O_NOFOLLOW).
func (r *guardRoot) open(rel string, flags int, mode uint32) (int, syscall.Errno) {
	if rel == "" {
		rel = "."
	}
	flags &= openFlags
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Mode: uint64(mode & 07777),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flags&unix.O_CREAT == 0 && flags&unix.O_TMPFILE != unix.O_TMPFILE {
		how.Mode = 0
	}
	for {
		fd, err := unix.Openat2(r.fd, rel, &how)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue // a rename beneath raced the lookup
		}
		return fd, gofs.ToErrno(err)
	}
}

// openFlags are the flags of an open the guard passes on (openat2
// refuses any other bit, and the kernel's request may carry its own).
const openFlags = unix.O_ACCMODE | unix.O_APPEND | unix.O_TRUNC | unix.O_CREAT | unix.O_EXCL | unix.O_NONBLOCK |
	unix.O_SYNC | unix.O_DSYNC | unix.O_DIRECT | unix.O_NOATIME | unix.O_LARGEFILE | unix.O_DIRECTORY | unix.O_PATH | unix.O_TMPFILE

// parent opens the folder that holds rel, and rel's name in it.
func (r *guardRoot) parent(rel string) (int, string, syscall.Errno) {
	dir, name := path.Split(rel)
	fd, errno := r.open(strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY, 0)
	return fd, name, errno
}

func (r *guardRoot) stat(rel string, st *syscall.Stat_t) syscall.Errno {
	fd, errno := r.open(rel, unix.O_PATH, 0)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	return gofs.ToErrno(syscall.Fstat(fd, st))
}

// entry fills out from st and makes the child's inode.
func (n *gnode) entry(ctx context.Context, st *syscall.Stat_t, out *fuse.EntryOut) *gofs.Inode {
	out.Attr.FromStat(st)
	return n.NewInode(ctx, &gnode{r: n.r}, gofs.StableAttr{Mode: st.Mode, Ino: st.Ino})
}

func (n *gnode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	var st syscall.Stat_t
	if errno := n.r.stat(n.child(name), &st); errno != 0 {
		return nil, errno
	}
	return n.entry(ctx, &st, out), 0
}

func (n *gnode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if g, ok := f.(gofs.FileGetattrer); ok {
		return g.Getattr(ctx, out)
	}
	var st syscall.Stat_t
	if errno := n.r.stat(n.rel(), &st); errno != 0 {
		return errno
	}
	out.FromStat(&st)
	return 0
}

func (n *gnode) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	rel := n.rel()
	if n.r.protected(rel) {
		return syscall.EACCES
	}
	if s, ok := f.(*gfile); ok {
		return s.LoopbackFile.Setattr(ctx, in, out)
	}
	flags := unix.O_PATH
	if _, ok := in.GetSize(); ok {
		flags = unix.O_WRONLY
	}
	fd, errno := n.r.open(rel, flags, 0)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	proc := fmt.Sprintf("/proc/self/fd/%d", fd)
	if m, ok := in.GetMode(); ok {
		if err := unix.Fchmodat(unix.AT_FDCWD, proc, m&07777, 0); err != nil {
			return gofs.ToErrno(err)
		}
	}
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if uok || gok {
		u, g := -1, -1
		if uok {
			u = int(uid)
		}
		if gok {
			g = int(gid)
		}
		if err := unix.Fchownat(fd, "", u, g, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return gofs.ToErrno(err)
		}
	}
	if sz, ok := in.GetSize(); ok {
		if err := unix.Ftruncate(fd, int64(sz)); err != nil {
			return gofs.ToErrno(err)
		}
	}
	mtime, mok := in.GetMTime()
	atime, aok := in.GetATime()
	if mok || aok {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if aok {
			ts[0] = unix.NsecToTimespec(atime.UnixNano())
		}
		if mok {
			ts[1] = unix.NsecToTimespec(mtime.UnixNano())
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, proc, ts, 0); err != nil {
			return gofs.ToErrno(err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return gofs.ToErrno(err)
	}
	out.FromStat(&st)
	return 0
}

// writes says whether open flags change the file.
func writes(flags uint32) bool {
	return flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0
}

func (n *gnode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	rel := n.rel()
	if writes(flags) && n.r.protected(rel) {
		return nil, 0, syscall.EACCES
	}
	fd, errno := n.r.open(rel, int(flags)&^(unix.O_CREAT|unix.O_EXCL|unix.O_NOCTTY), 0)
	if errno != 0 {
		return nil, 0, errno
	}
	return &gfile{gofs.NewLoopbackFileFromOS(os.NewFile(uintptr(fd), rel))}, 0, 0
}

func (n *gnode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	rel := n.child(name)
	if n.r.protected(rel) {
		return nil, nil, 0, syscall.EACCES
	}
	fd, errno := n.r.open(rel, int(flags)|unix.O_CREAT, mode)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, nil, 0, gofs.ToErrno(err)
	}
	return n.entry(ctx, &st, out), &gfile{gofs.NewLoopbackFileFromOS(os.NewFile(uintptr(fd), rel))}, 0, 0
}

// made stats what a call just made in the folder at pfd and returns its
// inode.
func (n *gnode) made(ctx context.Context, pfd int, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, gofs.ToErrno(err)
	}
	var sst syscall.Stat_t
	sst.Dev, sst.Ino, sst.Nlink, sst.Mode, sst.Uid, sst.Gid, sst.Rdev = st.Dev, st.Ino, st.Nlink, st.Mode, st.Uid, st.Gid, st.Rdev
	sst.Size, sst.Blksize, sst.Blocks = st.Size, st.Blksize, st.Blocks
	sst.Atim, sst.Mtim, sst.Ctim = syscall.Timespec(st.Atim), syscall.Timespec(st.Mtim), syscall.Timespec(st.Ctim)
	return n.entry(ctx, &sst, out), 0
}

// inParent runs do in the folder that holds the child name of n, unless
// the child is protected.
func (n *gnode) inParent(name string, do func(pfd int) error) (int, syscall.Errno) {
	if n.r.protected(n.child(name)) {
		return -1, syscall.EACCES
	}
	pfd, errno := n.r.open(n.rel(), unix.O_PATH|unix.O_DIRECTORY, 0)
	if errno != 0 {
		return -1, errno
	}
	if err := do(pfd); err != nil {
		unix.Close(pfd)
		return -1, gofs.ToErrno(err)
	}
	return pfd, 0
}

func (n *gnode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	pfd, errno := n.inParent(name, func(pfd int) error { return unix.Mkdirat(pfd, name, mode) })
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(pfd)
	return n.made(ctx, pfd, name, out)
}

func (n *gnode) Mknod(ctx context.Context, name string, mode, dev uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	pfd, errno := n.inParent(name, func(pfd int) error { return unix.Mknodat(pfd, name, mode, int(dev)) })
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(pfd)
	return n.made(ctx, pfd, name, out)
}

func (n *gnode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	pfd, errno := n.inParent(name, func(pfd int) error { return unix.Symlinkat(target, pfd, name) })
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(pfd)
	return n.made(ctx, pfd, name, out)
}

func (n *gnode) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	t, ok := target.(*gnode)
	if !ok {
		return nil, syscall.EXDEV
	}
	trel := t.rel()
	if n.r.protected(trel) {
		return nil, syscall.EACCES
	}
	tfd, tname, errno := n.r.parent(trel)
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(tfd)
	pfd, errno := n.inParent(name, func(pfd int) error { return unix.Linkat(tfd, tname, pfd, name, 0) })
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(pfd)
	return n.made(ctx, pfd, name, out)
}

func (n *gnode) Unlink(ctx context.Context, name string) syscall.Errno {
	pfd, errno := n.inParent(name, func(pfd int) error { return unix.Unlinkat(pfd, name, 0) })
	if errno == 0 {
		unix.Close(pfd)
	}
	return errno
}

func (n *gnode) Rmdir(ctx context.Context, name string) syscall.Errno {
	pfd, errno := n.inParent(name, func(pfd int) error { return unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR) })
	if errno == 0 {
		unix.Close(pfd)
	}
	return errno
}

func (n *gnode) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*gnode)
	if !ok {
		return syscall.EXDEV
	}
	from, to := n.child(name), np.child(newName)
	if n.r.protected(from) || n.r.protected(to) {
		return syscall.EACCES
	}
	// What moves must hold nothing protected: the folder moved away, and
	// with RENAME_EXCHANGE the one that moves back.
	moved := []string{from}
	if flags&unix.RENAME_EXCHANGE != 0 {
		moved = append(moved, to)
	}
	for _, m := range moved {
		if errno := n.r.holdsProtected(m); errno != 0 {
			return errno
		}
	}
	pfd, errno := n.r.open(n.rel(), unix.O_PATH|unix.O_DIRECTORY, 0)
	if errno != 0 {
		return errno
	}
	defer unix.Close(pfd)
	npfd, errno := n.r.open(np.rel(), unix.O_PATH|unix.O_DIRECTORY, 0)
	if errno != 0 {
		return errno
	}
	defer unix.Close(npfd)
	return gofs.ToErrno(unix.Renameat2(pfd, name, npfd, newName, uint(flags)))
}

// holdsProtected walks the folder at rel (if it is one) and refuses
// (EACCES) when a path below it is protected, or when it holds more
// than guardLimit entries.
func (r *guardRoot) holdsProtected(rel string) syscall.Errno {
	seen := 0
	var walk func(rel string) syscall.Errno
	walk = func(rel string) syscall.Errno {
		fd, errno := r.open(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if errno == syscall.ENOTDIR || errno == syscall.ELOOP || errno == syscall.ENOENT {
			return 0 // a file, a link, nothing: nothing below it
		}
		if errno != 0 {
			return errno
		}
		f := os.NewFile(uintptr(fd), rel)
		defer f.Close()
		for {
			ents, err := f.ReadDir(256)
			for _, e := range ents {
				if seen++; seen > guardLimit {
					return syscall.EACCES
				}
				c := path.Join(rel, e.Name())
				if r.protected(c) {
					return syscall.EACCES
				}
				if e.IsDir() {
					if errno := walk(c); errno != 0 {
						return errno
					}
				}
			}
			if err != nil || len(ents) == 0 {
				return 0
			}
		}
	}
	return walk(rel)
}

func (n *gnode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	pfd, name, errno := n.r.parent(n.rel())
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(pfd)
	buf := make([]byte, 4096)
	for {
		k, err := unix.Readlinkat(pfd, name, buf)
		if err != nil {
			return nil, gofs.ToErrno(err)
		}
		if k < len(buf) {
			return buf[:k], 0
		}
		if len(buf) >= 1<<16 {
			return nil, syscall.ENAMETOOLONG
		}
		buf = make([]byte, 2*len(buf))
	}
}

func (n *gnode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	fd, errno := n.r.open(n.rel(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if errno != 0 {
		return nil, errno
	}
	return gofs.NewLoopbackDirStreamFd(fd)
}

func (n *gnode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var s syscall.Statfs_t
	if err := syscall.Fstatfs(n.r.fd, &s); err != nil {
		return gofs.ToErrno(err)
	}
	out.FromStatfsT(&s)
	return 0
}

// xattr runs do on the node's own file, through /proc/self/fd (which
// leads to the file itself, a link included, never through one).
func (n *gnode) xattr(do func(p string) error) syscall.Errno {
	fd, errno := n.r.open(n.rel(), unix.O_PATH, 0)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	return gofs.ToErrno(do(fmt.Sprintf("/proc/self/fd/%d", fd)))
}

func (n *gnode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	var k int
	errno := n.xattr(func(p string) (err error) { k, err = unix.Getxattr(p, attr, dest); return })
	return uint32(k), errno
}

func (n *gnode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	var k int
	errno := n.xattr(func(p string) (err error) { k, err = unix.Listxattr(p, dest); return })
	return uint32(k), errno
}

func (n *gnode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if n.r.protected(n.rel()) {
		return syscall.EACCES
	}
	return n.xattr(func(p string) error { return unix.Setxattr(p, attr, data, int(flags)) })
}

func (n *gnode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if n.r.protected(n.rel()) {
		return syscall.EACCES
	}
	return n.xattr(func(p string) error { return unix.Removexattr(p, attr) })
}

// gfile is an open file of a guarded folder: its reads and writes go to
// the file the guard opened; it passes no ioctl on (an ioctl could
// change what the guard keeps) and asks the kernel for no passthrough.
type gfile struct{ *gofs.LoopbackFile }

func (f *gfile) Ioctl(context.Context, uint32, uint64, []byte, []byte) (int32, syscall.Errno) {
	return 0, syscall.ENOTTY
}

func (f *gfile) PassthroughFd() (int, bool) { return -1, false }

// guardTimeout is how long the kernel may keep what the guard said of a
// name or a file before asking again.
const guardTimeout = time.Second

// mountGuard serves dir through the guard, mounted over dir itself in
// this (private) mount namespace, and returns when the mount is up. The
// server runs until this process exits.
func mountGuard(dir, home string, keep []string, commits bool) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	r := &guardRoot{fd: fd, commits: commits}
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		real = dir
	}
	if home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
	}
	if _, ok := Protects(real, commits); ok || InHomeTree(real, home) != "" {
		r.whole = true
	}
	r.keep = homeTreesBelow(real, home)
	for _, k := range keep {
		if k == real || within(real, k) {
			r.whole = true
		} else if rel, ok := strings.CutPrefix(k, real+"/"); ok {
			r.keep = append(r.keep, rel)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return err
	}
	timeout, negative := guardTimeout, time.Duration(0)
	root := &gnode{r: r}
	opts := &gofs.Options{
		EntryTimeout: &timeout, AttrTimeout: &timeout, NegativeTimeout: &negative,
		RootStableAttr:  &gofs.StableAttr{Ino: st.Ino},
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName: "bulkhead-guard", Name: "bulkhead",
			DirectMountStrict: true,
			// the kernel checks each access against the files' modes, as
			// on the folder itself
			Options:       []string{"default_permissions"},
			MaxWrite:      1 << 20,
			DisableXAttrs: false,
		},
	}
	srv, err := fuse.NewServer(gofs.NewNodeFS(root, opts), dir, &opts.MountOptions)
	if err != nil {
		unix.Close(fd)
		return err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return err
	}
	return nil
}
