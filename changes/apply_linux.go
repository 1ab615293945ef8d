//go:build linux

package changes

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// Result is what applying a set did.
type Result struct {
	// Applied are the entries written into the folder (by index).
	Applied []int
	// Failed are the entries not applied, and why: a conflict (the
	// folder's file changed since the set was read), or an entry that is
	// never applied. They stay pending.
	Failed map[int]string
}

// ErrConflict is matched by the reason of an entry whose file in the
// folder changed since the set was read.
var ErrConflict = errors.New("changed in your folder since it was shown: not applied, left pending")

// Accept applies the entries picked (nil: all) to the folder and
// settles the set: what was applied, and the entries not picked (which
// are discarded), are decided; an entry that failed stays pending. A
// layer whose process runs keeps running where every entry was
// accepted; where some were not, the process is stopped first, so that
// what it sees is what the folder holds.
func (s *Store) Accept(set *Set, picks []int) (Result, error) {
	all := picks == nil
	if all {
		picks = make([]int, len(set.ops))
		for i := range picks {
			picks[i] = i
		}
	}
	if !all || len(picks) < len(set.ops) {
		s.stop(set.Layer.ID)
	}
	res, err := s.apply(set, picks)
	if err != nil {
		return res, err
	}
	return res, s.finish(set, res)
}

// Discard drops the set whole: its layer's process is stopped and the
// layer removed (the entries past the bound, not listed, stay pending).
func (s *Store) Discard(set *Set) error {
	s.stop(set.Layer.ID)
	return s.finish(set, Result{})
}

// finish settles what was decided of set: where nothing of the layer is
// left to decide and no process holds it, the layer goes.
func (s *Store) finish(set *Set, res Result) error {
	if len(res.Failed) == 0 && set.View.More == 0 && !s.Held(set.Layer.ID) {
		return removeAll(set.Layer.dir)
	}
	add := settled{}
	for i, ops := range set.ops {
		if _, failed := res.Failed[i]; failed {
			continue
		}
		for _, o := range ops {
			switch {
			case o.up.exists():
				add[o.rel] = o.up
			case o.kind == opRemove:
				add[o.rel] = fingerprint{Type: "hidden"}
			}
			if o.kind == opRename {
				add[o.from] = o.fromUp
			}
		}
	}
	return s.settle(set.Layer, add)
}

func (s *Store) apply(set *Set, picks []int) (Result, error) {
	res := Result{Failed: map[int]string{}}
	up, err := openRoot(set.Layer.upper())
	if err != nil {
		return res, fmt.Errorf("change set %s: its layer: %w", set.Layer.ID, err)
	}
	defer closeFD(up)
	lo, err := openRoot(set.Layer.Folder)
	if err != nil {
		return res, fmt.Errorf("change set %s: the folder %s: %w", set.Layer.ID, set.Layer.Folder, err)
	}
	defer closeFD(lo)
	a := &applier{up: up, lo: lo, dirs: set.dirs}
	slices.Sort(picks)
	for _, i := range slices.Compact(picks) {
		if i < 0 || i >= len(set.ops) {
			continue
		}
		if never := set.View.Entries[i].Never; never != "" {
			res.Failed[i] = never
			continue
		}
		failed := ""
		for _, o := range set.ops[i] {
			if err := a.do(o); err != nil {
				failed = err.Error()
				break
			}
		}
		if failed != "" {
			res.Failed[i] = failed
			continue
		}
		res.Applied = append(res.Applied, i)
	}
	return res, nil
}

type applier struct {
	up, lo int
	dirs   map[string]uint32
}

// unchanged checks that the folder's node at rel is still base.
func (a *applier) unchanged(rel string, base fingerprint) error {
	now, err := statAt(a.lo, rel)
	if err != nil {
		return err
	}
	switch {
	case !base.exists() && !now.exists():
		return nil
	case base.Type == "folder" && now.Type == "folder":
		return nil // a folder's times move with what it holds
	case base.exists() && base.same(now):
		return nil
	}
	return ErrConflict
}

// dir opens (making what is missing, with the layer's modes) the folder
// rel of the folder, to write in.
func (a *applier) dir(rel string) (int, error) {
	fd, err := openAt(a.lo, rel, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err == nil || !errors.Is(err, unix.ENOENT) {
		if err != nil {
			return -1, fmt.Errorf("%s: %w", rel, err)
		}
		return fd, nil
	}
	p, name := parent(rel)
	pfd, err := a.dir(p)
	if err != nil {
		return -1, err
	}
	defer closeFD(pfd)
	mode, ok := a.dirs[rel]
	if !ok {
		mode = 0o755
	}
	if err := unix.Mkdirat(pfd, name, mode); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("make %s: %w", rel, err)
	}
	if err := chmodAt(pfd, name, mode); err != nil {
		return -1, err
	}
	return openAt(a.lo, rel, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
}

func (a *applier) do(o op) error {
	switch o.kind {
	case opRename:
		if err := a.unchanged(o.from, o.base); err != nil {
			return err
		}
		if err := a.unchanged(o.rel, fingerprint{}); err != nil {
			return err
		}
		fp, fname := parent(o.from)
		ffd, err := a.dir(fp)
		if err != nil {
			return err
		}
		defer closeFD(ffd)
		tp, tname := parent(o.rel)
		tfd, err := a.dir(tp)
		if err != nil {
			return err
		}
		defer closeFD(tfd)
		return unix.Renameat2(ffd, fname, tfd, tname, unix.RENAME_NOREPLACE)
	}
	if err := a.unchanged(o.rel, o.base); err != nil {
		return err
	}
	p, name := parent(o.rel)
	pfd, err := a.dir(p)
	if err != nil {
		return err
	}
	defer closeFD(pfd)
	switch o.kind {
	case opRemove:
		return removeAt(pfd, name)
	case opChmod:
		return chmodAt(pfd, name, o.mode)
	case opMkdir:
		if err := unix.Mkdirat(pfd, name, o.mode); err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
		return chmodAt(pfd, name, o.mode)
	case opLink:
		tmp := tempName(name)
		if err := unix.Symlinkat(o.target, pfd, tmp); err != nil {
			return err
		}
		if err := unix.Renameat(pfd, tmp, pfd, name); err != nil {
			_ = unix.Unlinkat(pfd, tmp, 0)
			return err
		}
		return nil
	case opWrite:
		return a.write(o, pfd, name)
	}
	return fmt.Errorf("unknown step %d", o.kind)
}

// write copies the layer's file to a new file beside the folder's and
// renames it over the name: atomic, a new inode (a hard-linked file of
// the user's is not written through), with the mode less any set-id
// bit. The layer's file must be as it was read, before and after the
// copy.
func (a *applier) write(o op, pfd int, name string) error {
	src, err := openFile(a.up, o.rel, o.up)
	if err != nil {
		if errors.Is(err, errChanged) {
			return fmt.Errorf("the app changed it since it was shown: not applied, left pending")
		}
		return err
	}
	defer src.Close()
	tmp := tempName(name)
	fd, err := unix.Openat(pfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	dst := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		dst.Close()
		if !ok {
			_ = unix.Unlinkat(pfd, tmp, 0)
		}
	}()
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	if err := unix.Fchmod(fd, o.mode); err != nil {
		return err
	}
	if err := dst.Sync(); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil || !fingerprintOf(&st).same(o.up) {
		return fmt.Errorf("the app changed it while it was applied: not applied, left pending")
	}
	if err := a.unchanged(o.rel, o.base); err != nil {
		return err
	}
	if err := unix.Renameat(pfd, tmp, pfd, name); err != nil {
		return err
	}
	ok = true
	return nil
}

func tempName(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	n := name
	if len(n) > 100 {
		n = n[:100]
	}
	return "." + n + ".bulkhead-" + hex.EncodeToString(b[:])
}

// chmodAt sets the mode of name in the folder pfd, following no link.
func chmodAt(pfd int, name string, mode uint32) error {
	fd, err := unix.Openat(pfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer closeFD(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil // a link has no mode of its own
	}
	return unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), mode, 0)
}

// removeAt removes name from the folder pfd, with all it holds, never
// following a link.
func removeAt(pfd int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(pfd, name, 0)
	}
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	ns, err := f.Readdirnames(-1)
	if err == nil {
		for _, n := range ns {
			if err = removeAt(fd, n); err != nil {
				break
			}
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
}
