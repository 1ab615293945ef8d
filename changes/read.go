package changes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Limits bound what Read lists and shows.
type Limits struct {
	// Entries is the most entries a set lists; the rest are counted
	// (ChangeSet.More) and stay pending.
	Entries int
	// DiffBytes is the largest text file whose diff is shown (either
	// side); DiffLines the most diff lines a whole set shows.
	DiffBytes int64
	DiffLines int
	// Nodes is the most nodes of the layer read at all.
	Nodes int
}

// DefaultLimits: a set of 50,000 entries, diffs of text files up to
// 512 KiB, 20,000 diff lines in all.
var DefaultLimits = Limits{Entries: 50_000, DiffBytes: 512 << 10, DiffLines: 20_000, Nodes: 500_000}

// Set is a layer read as a change set: what the person sees (View) and,
// per entry, what applying it does.
type Set struct {
	Layer Layer
	View  permissions.ChangeSet
	ops   [][]op
	// dirs are the modes of the layer's new folders, for the parents an
	// applied file needs.
	dirs map[string]uint32
}

// Empty reports whether the set holds nothing to decide.
func (s *Set) Empty() bool { return len(s.View.Entries) == 0 && s.View.More == 0 }

type opKind int

const (
	opWrite  opKind = iota // a regular file, from the layer
	opMkdir                // a folder
	opLink                 // a symbolic link
	opRemove               // the path, with all it holds
	opChmod                // its mode alone
	opRename               // from → rel, as it is
)

// op is one step of applying an entry.
type op struct {
	kind   opKind
	rel    string
	from   string
	mode   uint32 // permission bits to apply (set-id bits already stripped)
	target string // a link's text
	up     fingerprint
	// base is the folder's node at rel (at from, for a rename) as read:
	// applying finds it unchanged, or it is a conflict.
	base fingerprint
	// fromUp, for a rename, is the layer's node at from (its whiteout).
	fromUp fingerprint
}

// raw is an entry being read.
type raw struct {
	e      permissions.ChangeEntry
	ops    []op
	lo, up fingerprint
	hidden bool // a removal under a folder made again: no node of the layer at its path
}

type reader struct {
	s        *Store
	l        Layer
	up, lo   int
	lim      Limits
	settled  settled
	raws     []*raw
	dirs     map[string]uint32
	inodes   map[uint64][]string
	nodes    int
	lostRead error
	ctx      context.Context
}

// Read reads l as a change set. A layer whose process still runs may
// change while it is read: what is applied is checked against what was
// read (Apply).
func (s *Store) Read(ctx context.Context, l Layer) (*Set, error) {
	return s.read(ctx, l, DefaultLimits)
}

func (s *Store) read(ctx context.Context, l Layer, lim Limits) (*Set, error) {
	up, err := openRoot(l.upper())
	if err != nil {
		return nil, fmt.Errorf("change set %s: its layer: %w", l.ID, err)
	}
	defer closeFD(up)
	lo, err := openRoot(l.Folder)
	if err != nil {
		return nil, fmt.Errorf("change set %s: the folder %s: %w", l.ID, l.Folder, err)
	}
	defer closeFD(lo)
	r := &reader{s: s, l: l, up: up, lo: lo, lim: lim, settled: s.settled(l), dirs: map[string]uint32{}, inodes: map[uint64][]string{}, ctx: ctx}
	if err := r.walk("", true); err != nil {
		return nil, fmt.Errorf("change set %s: %w", l.ID, err)
	}
	r.renames()
	r.groupGit()
	slices.SortFunc(r.raws, func(a, b *raw) int { return strings.Compare(a.e.Path, b.e.Path) })
	set := &Set{Layer: l, dirs: r.dirs, View: permissions.ChangeSet{ID: l.ID, Folder: l.Folder, Running: s.Held(l.ID)}}
	if len(r.raws) > lim.Entries {
		set.View.More = len(r.raws) - lim.Entries
		r.raws = r.raws[:lim.Entries]
	}
	w := r.warner()
	budget := lim.DiffLines
	for _, x := range r.raws {
		w.warn(x)
		if x.e.Type == "file" && (x.e.Op == "added" || x.e.Op == "changed" || x.e.Op == "replaced") && budget > 0 {
			x.e.Diff = r.diff(x)
			if x.e.Diff != nil {
				budget -= len(x.e.Diff.Lines)
			}
		}
		x.e.Path = clean(x.e.Path)
		x.e.From = clean(x.e.From)
		x.e.Target = clean(x.e.Target)
		set.View.Entries = append(set.View.Entries, x.e)
		set.ops = append(set.ops, x.ops)
	}
	if r.lostRead != nil {
		return nil, fmt.Errorf("change set %s: %w", l.ID, r.lostRead)
	}
	return set, nil
}

// clean is a name as a terminal may show it: no control characters,
// one line, bounded.
func clean(s string) string {
	s = termtext.OneLine(s)
	if utf8.RuneCountInString(s) > 1000 {
		s = string([]rune(s)[:1000]) + "…"
	}
	return s
}

func perm(f fingerprint) uint32 { return f.Mode & 0o7777 }

// applied is the mode a file or folder lands with: no set-id or sticky
// bit, ever.
func applied(f fingerprint) uint32 { return f.Mode & 0o777 }

func (r *reader) skip(p string, up fingerprint) bool {
	st, ok := r.settled[p]
	if !ok {
		return false
	}
	if up.Type == "folder" {
		return st.Type == "folder" && perm(st) == perm(up)
	}
	return st.same(up)
}

func (r *reader) add(x *raw) { r.raws = append(r.raws, x) }

// walk reads the layer's folder rel; lowerDir says whether the folder
// holds a folder at rel (else nothing below it is the folder's).
func (r *reader) walk(rel string, lowerDir bool) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	ns, err := names(r.up, rel)
	if err != nil {
		return err
	}
	slices.Sort(ns)
	if rel != "" && lowerDir && opaque(r.up, rel) {
		// Made again: what the folder held and the layer does not is
		// removed.
		lns, _ := names(r.lo, rel)
		for _, n := range lns {
			if _, ok := slices.BinarySearch(ns, n); ok {
				continue
			}
			p := join(rel, n)
			if st, ok := r.settled[p]; ok && st.Type == "hidden" {
				continue
			}
			lo, err := statAt(r.lo, p)
			if err != nil || !lo.exists() {
				continue
			}
			r.removal(p, lo, fingerprint{Type: "hidden"}, true)
		}
	}
	for _, n := range ns {
		r.nodes++
		if r.nodes > r.lim.Nodes {
			return fmt.Errorf("its layer holds more than %d files", r.lim.Nodes)
		}
		p := join(rel, n)
		up, err := statAt(r.up, p)
		if err != nil || !up.exists() {
			continue // gone while it was read (a running server)
		}
		var lo fingerprint
		if lowerDir {
			if lo, err = statAt(r.lo, p); err != nil {
				return err
			}
		}
		if r.skip(p, up) && up.Type != "folder" {
			continue
		}
		if up.whiteout() {
			if lo.exists() {
				r.removal(p, lo, up, false)
			}
			continue
		}
		switch up.Type {
		case "folder":
			r.dirs[p] = applied(up)
			switch {
			case lo.Type == "folder":
				if perm(up) != perm(lo) && !r.skip(p, up) {
					r.add(&raw{e: permissions.ChangeEntry{Path: p, Op: "mode", Type: "folder", Mode: modeWords(up), OldMode: modeWords(lo)},
						ops: []op{{kind: opChmod, rel: p, mode: applied(up), up: up, base: lo}}, up: up, lo: lo})
				}
				if err := r.walk(p, true); err != nil {
					return err
				}
			case lo.exists():
				r.add(&raw{e: permissions.ChangeEntry{Path: p, Op: "replaced", Type: "folder", Mode: modeWords(up), OldMode: modeWords(lo)},
					ops: []op{{kind: opRemove, rel: p, base: lo}, {kind: opMkdir, rel: p, mode: applied(up), up: up}}, up: up, lo: lo})
				if err := r.walk(p, false); err != nil {
					return err
				}
			default:
				before := len(r.raws)
				if err := r.walk(p, false); err != nil {
					return err
				}
				if len(r.raws) == before && !r.skip(p, up) {
					r.add(&raw{e: permissions.ChangeEntry{Path: p, Op: "added", Type: "folder", Mode: modeWords(up)},
						ops: []op{{kind: opMkdir, rel: p, mode: applied(up), up: up}}, up: up})
				}
			}
		case "file":
			r.file(p, up, lo)
		case "link":
			target, err := readLink(r.up, p)
			if err != nil {
				continue
			}
			if lo.Type == "link" {
				if old, err := readLink(r.lo, p); err == nil && old == target {
					continue
				}
			}
			x := &raw{e: permissions.ChangeEntry{Path: p, Op: "added", Type: "link", Target: target}, up: up, lo: lo}
			x.ops = []op{{kind: opLink, rel: p, target: target, up: up, base: lo}}
			if lo.exists() {
				x.e.Op = "replaced"
				x.e.OldMode = modeWords(lo)
			}
			r.add(x)
		default:
			x := &raw{e: permissions.ChangeEntry{Path: p, Op: "added", Type: up.Type, Never: "a " + up.Type + " is never applied to your folder"}, up: up, lo: lo}
			if lo.exists() {
				x.e.Op = "replaced"
			}
			r.add(x)
		}
	}
	return nil
}

// file reads a regular file of the layer at p over the folder's lo.
func (r *reader) file(p string, up, lo fingerprint) {
	if up.Nlink > 1 {
		r.inodes[up.Ino] = append(r.inodes[up.Ino], p)
	}
	x := &raw{e: permissions.ChangeEntry{Path: p, Type: "file", Mode: modeWords(up), Size: up.Size}, up: up, lo: lo}
	switch lo.Type {
	case "file":
		same, err := r.sameContent(p, up, lo)
		if err != nil {
			r.lostRead = err
			return
		}
		x.e.OldMode, x.e.OldSize = modeWords(lo), lo.Size
		switch {
		case same && perm(up) == perm(lo):
			return // copied up, not changed
		case same:
			x.e.Op = "mode"
			x.ops = []op{{kind: opChmod, rel: p, mode: applied(up), up: up, base: lo}}
		default:
			x.e.Op = "changed"
			x.ops = []op{{kind: opWrite, rel: p, mode: applied(up), up: up, base: lo}}
		}
	case "":
		x.e.Op = "added"
		x.ops = []op{{kind: opWrite, rel: p, mode: applied(up), up: up}}
	default:
		x.e.Op, x.e.OldMode = "replaced", modeWords(lo)
		x.ops = []op{{kind: opWrite, rel: p, mode: applied(up), up: up, base: lo}}
		if lo.Type == "folder" {
			x.ops = []op{{kind: opRemove, rel: p, base: lo}, {kind: opWrite, rel: p, mode: applied(up), up: up}}
		}
	}
	r.add(x)
}

// removal is the folder's node lo at p, removed by the layer (up: the
// whiteout, or a mark for a folder made again).
func (r *reader) removal(p string, lo, up fingerprint, hidden bool) {
	x := &raw{e: permissions.ChangeEntry{Path: p, Op: "removed", Type: lo.Type, OldMode: modeWords(lo), OldSize: lo.Size},
		ops: []op{{kind: opRemove, rel: p, base: lo, up: up}}, lo: lo, up: up, hidden: hidden}
	if lo.Type == "folder" {
		x.e.Files = r.count(p, 100_000)
	}
	r.add(x)
}

// count is how many files the folder holds at p (up to limit).
func (r *reader) count(p string, limit int) int {
	n := 0
	var walk func(string)
	walk = func(rel string) {
		ns, err := names(r.lo, rel)
		if err != nil {
			return
		}
		for _, name := range ns {
			if n >= limit {
				return
			}
			q := join(rel, name)
			fp, err := statAt(r.lo, q)
			if err != nil {
				continue
			}
			if fp.Type == "folder" {
				walk(q)
			} else {
				n++
			}
		}
	}
	walk(p)
	return n
}

// sameContent compares the layer's file with the folder's, byte for
// byte (their sizes first).
func (r *reader) sameContent(p string, up, lo fingerprint) (bool, error) {
	if up.Size != lo.Size {
		return false, nil
	}
	a, err := openFile(r.up, p, up)
	if err != nil {
		return false, nil // changed while read: shown as changed, checked again when applied
	}
	defer a.Close()
	b, err := openFile(r.lo, p, lo)
	if err != nil {
		return false, nil
	}
	defer b.Close()
	return sameReaders(a, b)
}

func sameReaders(a, b io.Reader) (bool, error) {
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == io.EOF || eb == io.ErrUnexpectedEOF, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, nil
		}
	}
}

// renames pairs a removed file with an added one of the same content
// and mode: a rename.
func (r *reader) renames() {
	bySize := map[int64][]*raw{}
	for _, x := range r.raws {
		if x.e.Op == "removed" && x.e.Type == "file" {
			bySize[x.lo.Size] = append(bySize[x.lo.Size], x)
		}
	}
	if len(bySize) == 0 {
		return
	}
	gone := map[*raw]bool{}
	compared := 0
	for _, a := range r.raws {
		if a.e.Op != "added" || a.e.Type != "file" || a.up.Nlink > 1 {
			continue
		}
		for _, rm := range bySize[a.up.Size] {
			if gone[rm] || perm(rm.lo) != perm(a.up) || compared > 10_000 {
				continue
			}
			compared++
			fa, err := openFile(r.up, a.e.Path, a.up)
			if err != nil {
				continue
			}
			fb, err := openFile(r.lo, rm.e.Path, rm.lo)
			if err != nil {
				fa.Close()
				continue
			}
			same, _ := sameReaders(fa, fb)
			fa.Close()
			fb.Close()
			if !same {
				continue
			}
			gone[rm] = true
			a.e.Op, a.e.From = "renamed", rm.e.Path
			// Applied as a rename of the folder's own file: its content
			// is what it was.
			a.ops = []op{{kind: opRename, rel: a.e.Path, from: rm.e.Path, base: rm.lo, up: a.up, fromUp: rm.up}}
			a.lo = rm.lo
			break
		}
	}
	r.raws = slices.DeleteFunc(r.raws, func(x *raw) bool { return gone[x] })
}

// diff is the diff of a text file's entry, or nil where it is not text
// or too large.
func (r *reader) diff(x *raw) *permissions.Change {
	exists := x.lo.Type == "file"
	if x.up.Size > r.lim.DiffBytes || exists && x.lo.Size > r.lim.DiffBytes {
		return &permissions.Change{Path: x.e.Path, Exists: exists, Unshown: fmt.Sprintf("not shown: larger than %s", permissions.Size(r.lim.DiffBytes))}
	}
	after, ok := r.text(r.up, x.e.Path, x.up)
	if !ok {
		return &permissions.Change{Path: x.e.Path, Exists: exists, Unshown: "not shown: not text"}
	}
	before := ""
	if exists {
		if before, ok = r.text(r.lo, x.e.Path, x.lo); !ok {
			return &permissions.Change{Path: x.e.Path, Exists: exists, Unshown: "not shown: it was not text"}
		}
	}
	return permissions.Diff(clean(x.e.Path), exists, before, after)
}

// text is the file's content where it is text (UTF-8, no NUL).
func (r *reader) text(root int, p string, fp fingerprint) (string, bool) {
	f, err := openFile(root, p, fp)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, r.lim.DiffBytes+1))
	if err != nil || int64(len(b)) > r.lim.DiffBytes || bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// modeWords is a mode as ls shows it: "-rwsr-xr-x".
func modeWords(f fingerprint) string {
	m := fs.FileMode(f.Mode & 0o777)
	switch f.Type {
	case "folder":
		m |= fs.ModeDir
	case "link":
		m |= fs.ModeSymlink
	case "fifo":
		m |= fs.ModeNamedPipe
	case "socket":
		m |= fs.ModeSocket
	case "device":
		m |= fs.ModeDevice
	}
	if f.Mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if f.Mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if f.Mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return lsMode(m)
}

// lsMode writes m as ls does (fs.FileMode's String spells set-id bits
// apart: "ugrwxr-xr-x").
func lsMode(m fs.FileMode) string {
	b := []byte("----------")
	switch {
	case m&fs.ModeDir != 0:
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	case m&fs.ModeNamedPipe != 0:
		b[0] = 'p'
	case m&fs.ModeSocket != 0:
		b[0] = 's'
	case m&fs.ModeDevice != 0:
		b[0] = 'c'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b[i+1] = rwx[i]
		}
	}
	set := func(i int, on bool, exec, noExec byte) {
		if !on {
			return
		}
		if b[i] == 'x' {
			b[i] = exec
		} else {
			b[i] = noExec
		}
	}
	set(3, m&fs.ModeSetuid != 0, 's', 'S')
	set(6, m&fs.ModeSetgid != 0, 's', 'S')
	set(9, m&fs.ModeSticky != 0, 't', 'T')
	return string(b)
}

// since says when, for a conflict's words.
func since(t time.Time) string { return t.Local().Format("15:04:05") }
